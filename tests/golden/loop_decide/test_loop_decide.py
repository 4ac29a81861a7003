"""Decision logic of examples/loop (loop_lib.py, ops.py): each stop reason and the happy path."""
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

SRC = os.environ.get("MAGPIE_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
LOOP = os.path.join(SRC, "examples", "loop")
sys.path.insert(0, LOOP)
import loop_lib as L  # noqa: E402
import loop_report  # noqa: E402
import ops  # noqa: E402



def read(path):
    with open(path) as f:
        return f.read()


CFG = json.loads(read(os.path.join(LOOP, "loop_config.json")))
SYMS = CFG["kernel_symbols"]
COLS = ["Name", "Calls", "Self CUDA total (us)", "Avg time (us)", "% Total", "Input Shapes", "kind", "category",
        "source_repo", "source_file", "upstream_url", "test_file", "test_cmd", "baseline_ref_file", "baseline_ref_symbol",
        "baseline_ref_kind", "triton_ref_file", "triton_ref_symbol", "notes", "source_resolution", "source_error"]


def gap_csv(rows):
    out = ["# Repository Path Mappings:", "# $LOOP_DIR=./examples/loop", "#", ",".join(COLS)]
    for r in rows:
        d = {c: "" for c in COLS}
        d.update(r)
        out.append(",".join('"%s"' % str(d[c]).replace('"', '""') for c in COLS))
    return "\n".join(out) + "\n"


def row(name, total, kind="triton_jit", res="resolved", err="", src="", calls=10):
    return {"Name": name, "Calls": calls, "Self CUDA total (us)": total, "Avg time (us)": total / calls,
            "% Total": total / 10.0, "kind": kind, "source_resolution": res, "source_error": err, "source_file": src}


NVJET = row("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT", 500, "nvjet", "unsupported", "closed_source_library")
ATEN = row("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", 300,
           "aten_native", "unresolved", "aten_native_source_not_found")
SUMSQ = row("_rms_norm_sumsq_kernel", 200, src="$LOOP_DIR/kernels_baseline.py:17")
ROT = row("_rotary_kernel", 150, src="$LOOP_DIR/kernels_baseline.py:75")


def choose(rows, conf=None, min_conf=0.9):
    cl = L.classify_rows(L.read_gap_csv(gap_csv(rows)), conf or {}, SYMS, min_conf)
    return L.choose_kernel(cl, SYMS)


class KernelChoice(unittest.TestCase):
    def test_happy_path_skips_external_kernels(self):
        r, op = choose([NVJET, ATEN, SUMSQ, ROT], {SUMSQ["Name"]: (1.0, [])})
        self.assertEqual((r["name"], op, r["rank"], r["file"], r["line"]), ("_rms_norm_sumsq_kernel", "rms_norm", 3,
                                                                             "kernels_baseline.py", 17))

    def test_ambiguous_above_stops(self):
        amb = row("_fused_thing_kernel", 400, res="unresolved", err="triton_source_ambiguous")
        with self.assertRaises(L.Stop) as c:
            choose([NVJET, amb, SUMSQ])
        self.assertEqual(c.exception.code, "source_mapping_ambiguous")

    def test_low_confidence_stops(self):
        with self.assertRaises(L.Stop) as c:
            choose([NVJET, SUMSQ], {SUMSQ["Name"]: (0.5, [])})
        self.assertEqual(c.exception.code, "source_mapping_low_confidence")

    def test_registry_kernel_the_mapper_missed_stops(self):
        missed = row("_rotary_kernel", 250, res="unresolved", err="triton_source_not_found")
        with self.assertRaises(L.Stop) as c:
            choose([NVJET, missed, SUMSQ])
        self.assertEqual(c.exception.code, "source_mapping_disagrees")

    def test_resolved_kernel_outside_the_registry_stops(self):
        other = row("_some_other_kernel", 250, src="$LOOP_DIR/elsewhere.py:3")
        with self.assertRaises(L.Stop) as c:
            choose([other, SUMSQ])
        self.assertEqual(c.exception.code, "source_mapping_disagrees")

    def test_nothing_maps(self):
        with self.assertRaises(L.Stop) as c:
            choose([NVJET, ATEN])
        self.assertEqual(c.exception.code, "no_mappable_kernel")

    def test_triton_suffix_and_source_parsing(self):
        self.assertEqual(L._symbol_of("_rotary_kernel_0d1d2d3d", SYMS), "_rotary_kernel")
        self.assertEqual(L._symbol_of("_rotary_kernelx", SYMS), "")
        self.assertEqual(L.parse_source_file("$LOOP_DIR/sub/k.py:42"), ("sub/k.py", 42))
        self.assertEqual(L.parse_source_file(""), ("", 0))

    def test_real_gap_csv_from_the_h200_trace(self):
        """The shipped H200 trace: ATen, nvjet and cuDNN kernels rank above the one Triton kernel,
        which the real mapper resolves in examples/traces; the choice skips exactly those."""
        magpie = os.environ.get("MAGPIE_BIN")
        if not magpie:
            self.skipTest("MAGPIE_BIN not set")
        magpie = os.path.abspath(magpie)
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "t"))
            os.symlink(os.path.join(SRC, "examples", "traces", "llama_tiny-rank-0.pt.trace.json.gz"),
                       os.path.join(d, "t", "llama_tiny-rank-0.pt.trace.json.gz"))
            subprocess.run([magpie, "benchmark", "--trace-dir", "t", "--top-k", "60", "--find-kernel-sources",
                            "--kernel-source-repos", os.path.join(SRC, "examples", "traces")], cwd=d, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            text = read(os.path.join(d, "results", "gap_analysis", "gap_analysis.csv"))
        rows = L.read_gap_csv(text)
        syms = {"residual_scale_kernel": "residual_scale"}
        cl = L.classify_rows(rows, {}, syms, 0.9)
        r, op = L.choose_kernel(cl, syms)
        self.assertEqual((r["name"], op, r["file"]), ("residual_scale_kernel", "residual_scale", "gen_trace.py"))
        self.assertGreater(r["rank"], 1)
        self.assertTrue(all(x["disposition"] == "external" for x in cl[:r["rank"] - 1]))
        totals = [x["total_us"] for x in cl]
        self.assertEqual(totals, sorted(totals, reverse=True))


def compare_report(cands, base_outcome="passed", reference="rms_norm_eager", method="outputs"):
    kr, ver = [], []
    for kid, outcome, verdict, sp, lo, hi in [("rms_norm_baseline", base_outcome, "baseline", 1.0, 1.0, 1.0)] + cands:
        kr.append({"extra": {"kernel_id": kid}, "outcome": outcome, "correctness_method": method,
                   "timing": {"samples": 50, "stats_ns": {"median": 4000.0 / sp if sp else None}}, "errors": []})
        ver.append({"kernel_id": kid, "verdict": verdict, "speedup_vs_baseline": sp, "ci_low": lo, "ci_high": hi})
    return {"mode": "compare", "results": {"kernel_results": kr, "verdicts": ver, "reference": reference}}


OPC = {"baseline_id": "rms_norm_baseline", "candidates": {"rms_norm_onepass": "onepass", "rms_norm_bad": "bad"}}


class Winner(unittest.TestCase):
    def test_happy_path(self):
        w = L.choose_winner(compare_report([("rms_norm_onepass", "passed", "faster", 1.8, 1.7, 1.9),
                                            ("rms_norm_bad", "incorrect", "not_ranked", None, None, None)]), OPC)
        self.assertEqual((w["winner"], w["impl"], w["speedup"], w["ci_low"]), ("rms_norm_onepass", "onepass", 1.8, 1.7))

    def test_incorrect_candidate_never_wins(self):
        with self.assertRaises(L.Stop) as c:
            L.choose_winner(compare_report([("rms_norm_onepass", "incorrect", "not_ranked", None, None, None),
                                            ("rms_norm_bad", "failed", "not_ranked", None, None, None)]), OPC)
        self.assertEqual(c.exception.code, "no_correct_candidate")

    def test_not_faster(self):
        for verdict, sp, lo, hi in [("same", 1.01, 0.99, 1.03), ("slower", 0.8, 0.79, 0.81),
                                    ("ambiguous", 1.1, 0.95, 1.3), ("faster", 1.05, 1.0, 1.1)]:
            with self.assertRaises(L.Stop) as c:
                L.choose_winner(compare_report([("rms_norm_onepass", "passed", verdict, sp, lo, hi)]), OPC)
            self.assertEqual(c.exception.code, "no_faster_candidate", verdict)

    def test_correctness_unproven(self):
        good = [("rms_norm_onepass", "passed", "faster", 1.8, 1.7, 1.9)]
        for rep in (compare_report(good, reference=None), compare_report(good, method="exit_code"),
                    compare_report(good, base_outcome="incorrect")):
            with self.assertRaises(L.Stop) as c:
                L.choose_winner(rep, OPC)
            self.assertEqual(c.exception.code, "correctness_unproven")

    def test_no_candidates(self):
        with self.assertRaises(L.Stop) as c:
            L.choose_winner(compare_report([]), OPC)
        self.assertEqual(c.exception.code, "no_candidates")


def bench_report(seed=0, num_prompts=96):
    return {"provenance": {"effective_config": {
        "client": {"dataset_name": "random", "seed": seed, "num_prompts": num_prompts, "random_input_len": 256},
        "envs": {"CONC": "32"}, "model": "", "framework": "", "profiler": {"torch_profiler": False},
        "output_dir": "/tmp/x"}}}


INFO = {"model_config": {"hidden": 1024}, "weights_sha256": "ab"}
LENS = [[200, 128], [256, 128]]


class Inputs(unittest.TestCase):
    def fp(self, rep=None, lens=None, info=None):
        return L.benchmark_fingerprint(rep or bench_report(), lens or LENS, info or INFO)

    def test_same_inputs_pass(self):
        a = self.fp()
        rep = bench_report()
        rep["provenance"]["effective_config"]["output_dir"] = "/elsewhere"  # where results go is not an input
        rep["provenance"]["effective_config"]["base_url"] = "http://127.0.0.1:9"  # nor the restarted server's port
        self.assertEqual(L.check_inputs_unchanged([a, a], [self.fp(rep), a]), a[0])

    def test_each_change_is_caught(self):
        a = self.fp()
        for b, part in [(self.fp(bench_report(seed=1)), "workload"), (self.fp(bench_report(num_prompts=97)), "workload"),
                        (self.fp(lens=[[201, 128], [256, 128]]), "requests"),
                        (self.fp(info={"model_config": {"hidden": 1024}, "weights_sha256": "cd"}), "model")]:
            with self.assertRaises(L.Stop) as c:
                L.check_inputs_unchanged([a, a], [a, b])
            self.assertEqual(c.exception.code, "inputs_changed")
            self.assertIn(part, c.exception.message)


def runs(tp, tpot):
    return [{"output_throughput": x, "tpot_mean_ms": y} for x, y in zip(tp, tpot)]


class Noise(unittest.TestCase):
    def test_t_distribution(self):
        self.assertAlmostEqual(L.t_two_sided_p(2.776445, 4), 0.05, places=4)
        self.assertAlmostEqual(L.t_two_sided_p(2.228139, 10), 0.05, places=4)
        self.assertAlmostEqual(L.t_two_sided_p(1.0, 3), 0.390998, places=4)
        self.assertAlmostEqual(L.t_two_sided_p(0.0, 7), 1.0, places=9)

    def test_welch_known_value(self):
        t, df, p = L.welch([10.0, 11.0, 12.0], [13.0, 14.0, 15.0])
        self.assertAlmostEqual(t, 3.674235, places=5)
        self.assertAlmostEqual(df, 4.0, places=6)
        self.assertAlmostEqual(p, 0.021312, places=4)

    def test_improved(self):
        ch = L.e2e_change(runs([1000, 1010, 995], [5.0, 4.9, 5.1]), runs([1200, 1190, 1210], [4.2, 4.1, 4.2]))
        self.assertEqual(L.e2e_decision(ch, "output_throughput"), "improved")
        self.assertTrue(ch["tpot_mean_ms"]["better"])
        self.assertAlmostEqual(ch["output_throughput"]["change_pct"], 19.80, places=2)

    def test_within_noise(self):
        ch = L.e2e_change(runs([1000, 1100, 950], [5, 5, 5]), runs([1020, 1080, 990], [5, 5, 5]))
        with self.assertRaises(L.Stop) as c:
            L.e2e_decision(ch, "output_throughput")
        self.assertEqual(c.exception.code, "e2e_within_noise")

    def test_regression_reported(self):
        ch = L.e2e_change(runs([1000, 1010, 995], [5, 5, 5]), runs([900, 905, 898], [5, 5, 5]))
        with self.assertRaises(L.Stop) as c:
            L.e2e_decision(ch, "output_throughput")
        self.assertEqual(c.exception.code, "e2e_regression")
        self.assertLess(c.exception.details["ours"]["change_pct"], 0)

    def test_disagreement_with_magpie_counts_as_noise(self):
        ch = L.e2e_change(runs([1000, 1010, 995], [5, 5, 5]), runs([1200, 1190, 1210], [5, 5, 5]))
        with self.assertRaises(L.Stop) as c:
            L.e2e_decision(ch, "output_throughput", {"beyond_noise": False})
        self.assertEqual(c.exception.code, "e2e_within_noise")
        self.assertEqual(L.e2e_decision(ch, "output_throughput", {"beyond_noise": True}), "improved")

    def test_untestable(self):
        ch = L.e2e_change(runs([1000], [5]), runs([1200, 1190], [5, 5]))
        with self.assertRaises(L.Stop) as c:
            L.e2e_decision(ch, "output_throughput")
        self.assertEqual(c.exception.code, "e2e_within_noise")

    def test_store_hashes(self):
        rc = lambda a, b: {"a_runs": [{"config_hash": a}] * 2, "b_runs": [{"config_hash": b}] * 2}  # noqa: E731
        u = ["http://127.0.0.1:5"]
        self.assertIsNone(L.check_store_hashes(rc("x", "x"), u * 2, u * 2))
        with self.assertRaises(L.Stop) as c:
            L.check_store_hashes(rc("x", "y"), u * 2, u * 2)
        self.assertEqual(c.exception.code, "inputs_changed")
        self.assertIn("server URLs", L.check_store_hashes(rc("x", "y"), u * 2, ["http://127.0.0.1:6"] * 2))
        self.assertIsNone(L.check_store_hashes({"error": "no store"}, u, u))

    def test_results_compare_verdict(self):
        rc = {"metrics": [{"metric": "serving.max_output_throughput", "beyond_noise": False, "verdict": "x"},
                          {"metric": "throughput.output_throughput", "beyond_noise": True, "verdict": "improved"}]}
        self.assertEqual(L.results_compare_verdict(rc)["verdict"], "improved")
        self.assertIsNone(L.results_compare_verdict({"metrics": []}))


class Registry(unittest.TestCase):
    def test_spec(self):
        self.assertEqual(ops.parse_spec("baseline"), {"rms_norm": "baseline", "silu_mul": "baseline", "rotary": "baseline"})
        self.assertEqual(ops.parse_spec("eager,rotary=fused")["rotary"], "fused")
        self.assertEqual(ops.parse_spec("eager,rotary=fused")["rms_norm"], "eager")
        for bad in ("fast", "rms_norm=nope", "gelu=eager"):
            with self.assertRaises(ops.SpecError):
                ops.parse_spec(bad)

    def test_kernel_symbols_are_the_jit_defs_of_the_baseline(self):
        text = read(os.path.join(LOOP, "kernels_baseline.py"))
        defs = set(re.findall(r"@triton\.jit\s*\ndef (\w+)\(", text))
        self.assertEqual(defs, set(SYMS))
        self.assertEqual(set(SYMS.values()), set(CFG["ops"]))

    def test_compare_yamls_name_the_configured_candidates(self):
        for op, oc in CFG["ops"].items():
            for backend, y in oc["compare"].items():
                ids = re.findall(r"\bid: (\w+)", read(os.path.join(LOOP, y)))
                self.assertIn(oc["baseline_id"], ids, y)
                for cid, impl in oc["candidates"].items():
                    self.assertIn(cid, ids, y)
                    self.assertIn(impl, ops.IMPLS[backend][op], (backend, op, impl))

    def test_report_renders_a_stopped_run(self):
        rep = {"outcome": "stopped", "backend": "numpy", "steps": {"calibrate": {"status": "ok", "seconds": 1}},
               "stop": L.Stop("no_mappable_kernel", "nothing").to_json(),
               "baseline_runs": [{"metrics": {"output_throughput": 10.0, "tpot_mean_ms": 2.0}}] * 2}
        t = loop_report.table(copy.deepcopy(rep))
        self.assertIn("no_mappable_kernel", t)
        self.assertIn("10.00 ± 0.00", t)
        self.assertIn("# Optimization loop report", loop_report.markdown(rep))


if __name__ == "__main__":
    unittest.main()
