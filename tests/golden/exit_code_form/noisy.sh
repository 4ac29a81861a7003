#!/usr/bin/env bash
# A failing testcase whose error output holds invalid UTF-8 (stray bytes, an overlong form, an
# encoded surrogate, a code point past U+10FFFF, a cut character), terminal escapes (clear screen,
# set the window title, bell) and other control bytes.
printf 'err \xff\xfe \033[2J\033]0;pwned\007 \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \x01\x7f \xe2\x82' >&2
exit 1
