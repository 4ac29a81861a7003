"""Scores a `magpie trace sources --json` report against ground_truth.tsv (see run.sh).

precision = correct resolved answers / all resolved answers (any resolved answer for a
"closed" or "absent" row, or for a row whose root was not given, is wrong); recall = correct
resolved answers / rows with a location in the given roots; candidates (below the confidence
threshold) are not answers: counted apart, right or wrong; classification = rows whose kind
matches; closed rows must be `unsupported`."""
import csv
import json
import os
import sys

here, report_path, elapsed_ms = sys.argv[1], sys.argv[2], int(sys.argv[3])
given = (sys.argv[4] if len(sys.argv) > 4 else "VLLM PYTORCH FLASHINFER").split()
rows = [r for r in csv.reader(open(os.path.join(here, "ground_truth.tsv")), delimiter="\t")
        if r and not r[0].startswith("#")]
report = json.load(open(report_path))
kernels = report["kernels"]
if len(kernels) != len(rows):
    sys.exit("FAIL: %d ground-truth rows, %d kernels in the report" % (len(rows), len(kernels)))
roots = {"$%s_DIR" % name: r for name, r in zip(given, report["roots"])}


def located(expected):
    """(root variable of the report, root path, relpath, line) or None when the root was not given."""
    var, rest = expected.split("/", 1)
    if var not in roots:
        return None
    rel, line = rest.rsplit(":", 1)
    return roots[var]["variable"], roots[var]["path"], rel, int(line)


# The ground truth holds for the snapshot commits only: every expected line must name its symbol.
for (trace, kind, expected, note, name), k in zip(rows, kernels):
    loc = located(expected) if expected.startswith("$") else None
    if loc and not k["symbol"].startswith("_Z"):  # a build that cannot demangle the name: unchecked
        path = os.path.join(loc[1], loc[2])
        lines = open(path, errors="replace").read().splitlines() if os.path.isfile(path) else []
        if len(lines) < loc[3] or k["symbol"] not in lines[loc[3] - 1]:
            print("skip: %s does not name %s at line %d: not the snapshot of ground_truth.tsv" % (path, k["symbol"], loc[3]))
            sys.exit(77)

stats = dict(rows=len(rows), located=0, resolved=0, correct=0, resolved_hi=0, correct_hi=0, kind_ok=0, closed=0,
             closed_unsupported=0, candidates=0, candidates_right=0)
problems = []
for (trace, kind, expected, note, name), k in zip(rows, kernels):
    loc = located(expected) if expected.startswith("$") else None
    want = "%s/%s:%d" % (loc[0], loc[2], loc[3]) if loc else None
    got = k["source_file"] if k["source_resolution"] == "resolved" else None
    if k["source_resolution"] == "candidate":
        stats["candidates"] += 1
        stats["candidates_right"] += k["source_file"] == want
    stats["located"] += want is not None
    # A plain name's kind (Triton or C++) is known only once its definition is found.
    kind_ok = k["kind"] == kind or (k["kind"] == "unknown" and expected.startswith("$") and loc is None)
    stats["kind_ok"] += kind_ok
    if expected == "closed":
        stats["closed"] += 1
        stats["closed_unsupported"] += k["source_resolution"] == "unsupported"
    if got:
        hi = k["confidence"] >= 0.7
        stats["resolved"] += 1
        stats["resolved_hi"] += hi
        stats["correct"] += got == want
        stats["correct_hi"] += hi and got == want
    if got != want or not kind_ok or (expected == "closed" and k["source_resolution"] != "unsupported"):
        problems.append("%-8s conf %.2f kind %s (want %s): got %s, want %s  [%s]\n         %s" % (
            k["source_resolution"], k["confidence"], k["kind"], kind, got or k["source_error"], want or expected, note,
            name[:110]))


def ratio(a, b):
    return round(a / b, 4) if b else 1.0


metrics = {
    "precision": ratio(stats["correct"], stats["resolved"]),
    "precision_conf_ge_0.7": ratio(stats["correct_hi"], stats["resolved_hi"]),
    "recall": ratio(stats["correct"], stats["located"]),
    "classification_accuracy": ratio(stats["kind_ok"], stats["rows"]),
    "closed_marked_unsupported": ratio(stats["closed_unsupported"], stats["closed"]),
}
print("ground truth: %(rows)d kernels, %(located)d with a location in the given roots, %(closed)d closed" % stats)
print("resolved %(resolved)d, correct %(correct)d; at confidence >= 0.7: resolved %(resolved_hi)d, correct %(correct_hi)d"
      % stats)
print("candidates (below the threshold, not answers): %(candidates)d, %(candidates_right)d of them at the right place"
      % stats)
print("roots given: %s" % " ".join(given))
for key, v in metrics.items():
    print("%-28s %.4f" % (key, v))
print("wall time (index + map): %d ms" % elapsed_ms)
for p in problems:
    print("  not as expected:", p)
floor = json.load(open(os.path.join(here, "metrics.json")))  # with or without the flashinfer root
fail = [k for k, v in floor.items() if metrics.get(k, 0) + 1e-9 < v]
for k in fail:
    print("FAIL: %s %.4f below %.4f (metrics.json)" % (k, metrics[k], floor[k]))
print("%d checks failed" % len(fail) if fail else "all checks passed")
sys.exit(1 if fail else 0)
