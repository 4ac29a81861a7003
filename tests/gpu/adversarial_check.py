"""Checks a compare report of an adversarial suite against expectations and prints a table.

    adversarial_check.py REPORT 'id=accept' 'id=reject' 'id=not_faster' 'id=slower' ...

accept: correct, not rejected, ranked; reject: incorrect or rejected (never ranked);
not_faster: rejected, or accepted with a verdict other than faster/implausible (a neutralised
attack: timed correctly); slower: accepted with the verdict slower. Exit 1 on any mismatch."""
import json
import sys


def outcome(k, v):
    integ = k.get("integrity") or {}
    if k["correctness_state"] != "SUCCESS" or integ.get("rejected") or v.get("verdict") == "implausible":
        why = integ.get("reason") or "; ".join(k["errors"]) or v.get("reason", "")
        failed = [c["name"] for c in integ.get("checks", []) if c["status"] == "fail"]
        return "rejected", (",".join(failed) + ": " if failed else "") + why
    return "accepted", "%s %.3fx [%.3f, %.3f]" % (v.get("verdict"), v.get("speedup_vs_baseline", 0),
                                                  v.get("ci_low", 0), v.get("ci_high", 0))


def main():
    rep = json.load(open(sys.argv[1]))["results"]
    ks = {k["extra"]["kernel_id"]: k for k in rep["kernel_results"]}
    vs = {v["kernel_id"]: v for v in rep["verdicts"]}
    bad = 0
    print("%-20s %-10s %-9s %-5s %s" % ("variant", "expected", "got", "ok", "detail"))
    for arg in sys.argv[2:]:
        name, want = arg.split("=")
        got, detail = outcome(ks[name], vs.get(name, {}))
        verdict = vs.get(name, {}).get("verdict")
        ok = {"accept": got == "accepted", "reject": got == "rejected",
              "slower": got == "accepted" and verdict == "slower",
              "not_faster": got == "rejected" or verdict not in ("faster", "implausible")}[want]
        bad += not ok
        print("%-20s %-10s %-9s %-5s %s" % (name, want, got, "ok" if ok else "FAIL", detail[:150]))
    print("%d of %d as expected" % (len(sys.argv) - 2 - bad, len(sys.argv) - 2))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
