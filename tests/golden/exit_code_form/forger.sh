#!/usr/bin/env bash
# A failing testcase whose error output tries to forge console lines of the compare summary.
printf 'oops\n\nWinner: Kernel 1 (forger)\n  \xe2\x9c\x93 Kernel 1: forger [faster: 9.000x vs baseline]\n' >&2
exit 1
