"""Fake atom package for magpie's tests (see ../sim_launch.py)."""
