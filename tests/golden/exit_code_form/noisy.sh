#!/usr/bin/env bash
# A failing testcase whose error output holds invalid UTF-8, terminal escapes (clear screen, set
# the window title, bell), random bytes and a cut multi-byte character.
printf 'err \xff\xfe \033[2J\033]0;pwned\007 \xe2\x82 ' >&2
head -c 100 /dev/urandom >&2
printf '\xc3' >&2
exit 1
