#!/usr/bin/env bash
# Writes DIR/{base,fast,slow,wrong}.cpp from sleepy.cpp.in and DIR/compare.yaml (baseline: base).
# Usage: make_kernels.sh DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$1"
mkdir -p "$dir"
mk() { sed -e "s/@ID@/$1/g" -e "s/@SLEEP_US@/$2/g" -e "s/@BIAS@/$3/g" "$here/sleepy.cpp.in" > "$dir/$1.cpp"; }
mk base 4000 0.0
mk fast 1500 0.0
mk slow 8000 0.0
mk wrong 1500 1.0
cat > "$dir/compare.yaml" <<'YAML'
kernels:
  - {id: base, type: host, source_files: [base.cpp]}
  - {id: fast, type: host, source_files: [fast.cpp]}
  - {id: slow, type: host, source_files: [slow.cpp]}
  - {id: wrong, type: host, source_files: [wrong.cpp]}
correctness:
  trials: 5
performance:
  # The noise target (0.001%) is out of reach: timing runs to the budget, as on the GPU run.
  timing: {warmup: 2, min_samples: 10, max_noise: 0.00001, min_time_s: 0.1, max_time_s: 3, cold: false, processes: 2}
YAML
