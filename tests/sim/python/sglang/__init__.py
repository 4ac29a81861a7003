"""Fake sglang package for magpie's tests (see ../sim_launch.py)."""
