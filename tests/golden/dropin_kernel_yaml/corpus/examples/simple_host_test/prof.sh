#!/usr/bin/env bash
# Custom prof_command: records that it ran (replaces the built-in profiler, as in Magpie).
echo "profiled $1" > profiled.txt
