#!/usr/bin/env bash
# README command 1 installs and builds only what the tool needs (issue 33): the default package
# list holds no test package, --tests adds them (and .ci/run uses it); the `app` preset configures
# without GoogleTest; the README's two commands and the build time it states are in place.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
S="$MAGPIE_SOURCE_DIR"
T="$GOLDEN_TMP"
bash "$S/scripts/install-deps.sh" --print > "$T/base.txt"
bash "$S/scripts/install-deps.sh" --print --tests > "$T/all.txt"
for p in libgtest-dev libgmock-dev python3-jsonschema slurm-wlm munge slurmdbd mariadb-server python3-venv chromium; do
  ! grep -qx "$p" "$T/base.txt" || fail "default install has test package $p"
  grep -qx "$p" "$T/all.txt" || fail "--tests lacks $p"
done
for p in cmake g++ ninja-build libyaml-cpp-dev libsqlite3-dev libboost1.81-dev python3 python3-aiohttp; do
  grep -qx "$p" "$T/base.txt" || fail "default install lacks $p"
done
grep -q "^scripts/install-deps.sh --tests$" "$S/.ci/run" || fail ".ci/run does not install the test packages"
grep -q "README command 1" "$S/.ci/run" || fail ".ci/run does not time command 1"
# README: command 1 = base packages + the binary + the example; command 2 = tests.
c1=$(grep -m1 "^bash scripts/install-deps.sh && cmake --preset app && cmake --build --preset app && ./build/magpie compare -k examples/host/compare.yaml$" "$S/README.md") \
  || fail "README command 1 changed: update this test and the CI step together"
grep -q "^bash scripts/install-deps.sh --tests && cmake --preset release && cmake --build --preset release && ctest --preset release$" \
  "$S/README.md" || fail "README command 2"
grep -Eq "^Command 1's build takes [0-9]+ min [0-9]+ s" "$S/README.md" || fail "README does not state command 1's build time"
# The app preset needs no GoogleTest (configure with find_package(GTest) disabled); release does.
command -v cmake > /dev/null || { echo "skip: cmake not found"; exit 77; }
(cd "$S" && cmake --preset app -B "$T/app" -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON > "$T/app.log" 2>&1) \
  || fail "app preset needs more than the default packages: $(tail -5 "$T/app.log")"
grep -q "MAGPIE_BUILD_TESTS:BOOL=OFF" "$T/app/CMakeCache.txt" || fail "app preset builds the tests"
if (cd "$S" && cmake --preset release -B "$T/rel" -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON > "$T/rel.log" 2>&1); then
  fail "release configured without GoogleTest: this test no longer proves anything"
fi
echo "ok: install split"
