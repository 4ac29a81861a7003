"""Bad-value battery (>= 40 cases). Each case writes a config (or uses CLI flags), runs magpie with
an empty output directory, and requires: a non-zero exit, stderr naming the place (file:line and
the dotted field, or the flag) and the field, and an output directory with no workspace and no
temporary files left."""
import os
import subprocess
import sys

MAGPIE = os.environ["MAGPIE_BIN"]
WORK = os.getcwd()

BENCH = """benchmark:
  framework: vllm
  model: org/model
  run_mode: local
  envs:
    EXTRA_VLLM_ARGS: ""
%s
"""


def bench_env(key, value):
    """A benchmark YAML whose envs get KEY: VALUE (line 7)."""
    return BENCH % ("    %s: %s" % (key, value)), 7, "benchmark.envs." + key


def bench_block(block, line, field):
    return ("benchmark:\n  framework: vllm\n  model: org/model\n  run_mode: local\n" + block), line, field


KERNEL = """kernel:
  id: k
  type: host
  source_files: [k.cpp]
  testcase_command: "true"
%s
"""


def kernel_extra(block, line, field):
    return KERNEL % block, line, field


# (name, kind, content or CLI args, expected line, expected field)
YAML_CASES = [
    ("tp_abc", "bench", bench_env("TP", "abc")),
    ("tp_float", "bench", bench_env("TP", "3.5")),
    ("tp_huge", "bench", bench_env("TP", "1e20")),
    ("tp_zero", "bench", bench_env("TP", "0")),
    ("tp_empty", "bench", bench_env("TP", '""')),
    ("isl_abc", "bench", bench_env("ISL", "abc")),
    ("osl_negative", "bench", bench_env("OSL", "-5")),
    ("conc_float", "bench", bench_env("CONC", "1.5")),
    ("ratio_7", "bench", bench_env("RANDOM_RANGE_RATIO", "7")),
    ("ratio_negative", "bench", bench_env("RANDOM_RANGE_RATIO", "-0.1")),
    ("num_prompts_zero", "bench", bench_env("NUM_PROMPTS", "0")),
    ("port_too_big", "bench", bench_env("PORT", "70000")),
    ("max_model_len_word", "bench", bench_env("MAX_MODEL_LEN", "big")),
    ("gpu_mem_util_high", "bench", bench_env("GPU_MEMORY_UTILIZATION", "1.5")),
    ("gpu_mem_util_zero", "bench", bench_env("GPU_MEM_UTIL", "0")),
    ("envs_lowercase_key", "bench", bench_env("tp", "two")),
    ("timeout_negative", "bench", bench_block("  timeout_seconds: -1\n", 5, "benchmark.timeout_seconds")),
    ("framework_unknown", "bench", ("benchmark:\n  framework: tensorrt\n  model: m\n", 2, "benchmark.framework")),
    ("run_mode_unknown", "bench", ("benchmark:\n  framework: vllm\n  model: m\n  run_mode: kubernetes\n", 4, "benchmark.run_mode")),
    ("run_kind_unknown", "bench", ("benchmark:\n  framework: vllm\n  model: m\n  run_kind: sometimes\n", 4, "benchmark.run_kind")),
    ("gap_start_150", "bench", bench_block("  gap_analysis:\n    enabled: true\n    trace_start_pct: 150\n", 7, "benchmark.gap_analysis.trace_start_pct")),
    ("gap_start_after_end", "bench", bench_block("  gap_analysis:\n    trace_start_pct: 60\n    trace_end_pct: 40\n", 6, "benchmark.gap_analysis.trace_start_pct")),
    ("gap_top_k_zero", "bench", bench_block("  gap_analysis:\n    top_k: 0\n", 6, "benchmark.gap_analysis.top_k")),
    ("tracelens_format", "bench", bench_block("  profiler:\n    tracelens:\n      export_format: pdf\n", 7, "benchmark.profiler.tracelens.export_format")),
    ("client_num_prompts_zero", "bench", bench_block("  client:\n    num_prompts: 0\n", 6, "benchmark.client.num_prompts")),
    ("client_ratio_one", "bench", bench_block("  client:\n    random_range_ratio: 1.5\n", 6, "benchmark.client.random_range_ratio")),
    ("server_port_zero", "bench", bench_block("  server:\n    port: 0\n", 6, "benchmark.server.port")),
    ("gpu_sel_negative", "bench", bench_block("  gpu_selection:\n    min_free_memory_gb: -1\n", 6, "benchmark.gpu_selection.min_free_memory_gb")),
    ("lifecycle_timeout_zero", "bench", bench_block("  server_lifecycle:\n    enabled: true\n    server_ready_timeout_s: 0\n", 7, "benchmark.server_lifecycle.server_ready_timeout_s")),
    ("capture_timeout_negative", "bench", bench_block("  profiler:\n    torch_profiler:\n      enabled: false\n      capture_timeout_seconds: -5\n", 8, "benchmark.profiler.torch_profiler.capture_timeout_seconds")),
    ("num_steps_zero", "bench", bench_block("  profiler:\n    torch_profiler:\n      num_steps: 0\n", 7, "benchmark.profiler.torch_profiler.num_steps")),
    ("system_profiler_not_bool", "bench", bench_block("  profiler:\n    system_profiler:\n      enabled: maybe\n", 7, "benchmark.profiler.system_profiler.enabled")),
    ("unknown_field", "bench", bench_block("  modle: org/typo\n", 5, "benchmark.modle")),
    ("envs_not_map", "bench", bench_block("  envs: [TP, 2]\n", 5, "benchmark.envs")),
    ("kernel_type_unknown", "kernel", ("kernel:\n  id: k\n  type: fortran\n  testcase_command: \"true\"\n", 3, "kernel.type")),
    ("working_dir_missing", "kernel", ("kernel:\n  id: k\n  type: host\n  working_dir: does/not/exist\n  testcase_command: \"true\"\n", 4, "kernel.working_dir")),
    ("working_dir_unset_var", "kernel", ("kernel:\n  id: k\n  type: host\n  working_dir: \"${MAGPIE_DROPIN_UNSET}/build\"\n"
                                          "  testcase_command: \"true\"\n", 4,
                                          ["kernel.working_dir", "$MAGPIE_DROPIN_UNSET is not set"])),
    ("trials_zero", "kernel", kernel_extra("correctness:\n  trials: 0\n", 7, "correctness.trials")),
    ("atol_negative", "kernel", kernel_extra("correctness:\n  atol: -1\n", 7, "correctness.atol")),
    ("accordo_backend_typo", "kernel", kernel_extra("correctness:\n  backend: acordo\n", 7, "correctness.backend")),
    ("warmup_negative_yaml", "kernel", kernel_extra("performance:\n  timing:\n    warmup: -1\n", 8, "performance.timing.warmup")),
    ("mixed_command", "kernel", ("kernel:\n  id: k\n  type: host\n  testcase_command: [[a], b]\n", 4, "kernel.testcase_command")),
    ("kernels_not_list", "kernel", ("kernels:\n  id: k\n", 2, "kernels")),
    ("perf_backend_unknown", "kernel", kernel_extra("performance:\n  backend: magic\n", 7, "performance.backend")),
    ("scheduler_env_unknown", "kernel", kernel_extra("scheduler:\n  environment: mars\n", 7, "scheduler.environment")),
]

K = "k.cpp"
CLI_CASES = [
    ("warmup_negative", ["analyze", K, "-t", "true", "--warmup", "-1"], "--warmup"),
    ("max_time_negative", ["analyze", K, "-t", "true", "--max-time", "-1"], "--max-time"),
    ("max_time_zero", ["analyze", K, "-t", "true", "--max-time", "0"], "--max-time"),
    ("atol_negative", ["analyze", K, "-t", "true", "--atol", "-1e-3"], "--atol"),
    ("rtol_nan", ["analyze", K, "-t", "true", "--rtol", "nan"], "--rtol"),
    ("trials_zero", ["analyze", K, "-t", "true", "--trials", "0"], "--trials"),
    ("min_samples_zero", ["analyze", K, "-t", "true", "--min-samples", "0"], "--min-samples"),
    ("max_noise_zero", ["analyze", K, "-t", "true", "--max-noise", "0"], "--max-noise"),
    ("min_time_negative", ["analyze", K, "-t", "true", "--min-time", "-2"], "--min-time"),
    ("seed_negative", ["analyze", K, "-t", "true", "--seed", "-3"], "--seed"),
    ("latency_rep_ms_zero", ["analyze", K, "-t", "true", "--latency-rep-ms", "0"], "--latency-rep-ms"),
    ("baseline_out_of_range", ["compare", K, K, "-t", "true", "--baseline", "5"], "--baseline"),
    ("type_unknown", ["analyze", K, "-t", "true", "--type", "fortran"], "--type"),
    ("workers_zero", ["-w", "0", "analyze", K, "-t", "true"], "--workers"),
    ("bench_tp_zero", ["benchmark", "vllm", "-m", "m", "--tp", "0"], "--tp"),
    ("bench_tp_word", ["benchmark", "vllm", "-m", "m", "--tp", "abc"], "--tp"),
    ("bench_conc_float", ["benchmark", "vllm", "-m", "m", "--concurrency", "1.5"], "--concurrency"),
    ("bench_ratio", ["benchmark", "--base-url", "http://127.0.0.1:9", "--random-range-ratio", "1.5"], "random_range_ratio"),
    ("bench_base_url", ["benchmark", "--base-url", "ftp://example"], "http"),
    ("bench_timeout_negative", ["benchmark", "vllm", "-m", "m", "--timeout", "-1"], "timeout"),
    ("bench_agentx", ["benchmark", "vllm", "-m", "m", "--agentx"], "--agentx"),
]


def leftovers(out):
    bad = []
    for dirpath, dirnames, filenames in os.walk(out):
        for n in dirnames + filenames:
            if n.startswith(("benchmark_", "analyze_", "compare_")) or ".tmp." in n:
                bad.append(os.path.join(dirpath, n))
    return bad


def run_case(name, argv, must):
    out = os.path.join(WORK, "out_" + name)
    os.makedirs(out)
    p = subprocess.run([MAGPIE] + argv + ["-o", out] if "-o" not in argv else [MAGPIE] + argv,
                       capture_output=True, text=True, timeout=120)
    problems = []
    if p.returncode == 0:
        problems.append("exit 0")
    for m in must:
        if m not in p.stderr:
            problems.append("stderr lacks %r" % m)
    left = leftovers(out)
    if left:
        problems.append("left behind: %s" % left)
    return problems, p


def main():
    with open(K, "w") as f:
        f.write("int main() { return 0; }\n")
    failed = 0
    total = 0
    for name, kind, (text, line, field) in YAML_CASES:
        path = os.path.join(WORK, name + ".yaml")
        with open(path, "w") as f:
            f.write(text)
        argv = ["benchmark", "-b", path] if kind == "bench" else ["analyze", "-k", path]
        must = ["%s:%d:" % (path, line)] + (field if isinstance(field, list) else [field])
        problems, p = run_case(name, argv, must)
        total += 1
        if problems:
            failed += 1
            print("FAIL %s: %s\n  stderr: %s" % (name, "; ".join(problems), p.stderr.strip()[-400:]))
        else:
            print("PASS %s: %s" % (name, p.stderr.strip().splitlines()[-1][:200]))
    for name, argv, must in CLI_CASES:
        problems, p = run_case("cli_" + name, argv, [must])
        total += 1
        if problems:
            failed += 1
            print("FAIL cli_%s: %s\n  stderr: %s" % (name, "; ".join(problems), p.stderr.strip()[-400:]))
        else:
            print("PASS cli_%s: %s" % (name, p.stderr.strip().splitlines()[-1][:200]))
    print("%d/%d bad-value cases refused as required" % (total - failed, total))
    assert total >= 40, total
    sys.exit(1 if failed else 0)


main()
