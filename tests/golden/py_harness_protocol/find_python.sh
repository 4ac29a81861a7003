# magpie_find_numpy_python: prints the first of $MAGPIE_PYTHON, /usr/bin/python3, python3 that
# can import numpy (Debian's python3-numpy lives in /usr/bin/python3, which a pyenv/venv
# python3 earlier on PATH may shadow); returns 1 when none can.
magpie_find_numpy_python() {
  local c
  for c in "${MAGPIE_PYTHON:-}" /usr/bin/python3 python3; do
    [ -n "$c" ] || continue
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import numpy' >/dev/null 2>&1; then
      command -v "$c"
      return 0
    fi
  done
  return 1
}
