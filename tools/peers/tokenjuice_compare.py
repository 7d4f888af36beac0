#!/usr/bin/env python3
"""Side by side: omni and tokenjuice on the real fixtures (issue 3, "Done means").

For every case of the fixtures folder (cmd.txt, output.txt, meta.json; see
its INDEX.md) this runs

  omni:       OMNI_HOME=<temp> OMNI distill --command CMD --exit-code N output.txt
  tokenjuice: TOKENJUICE reduce-json --no-stats   (stdin: {"toolName": "exec",
              "command": CMD, "combinedText": <output.txt>, "exitCode": N};
              the reduced text is the reply's "inlineText")

and judges both outputs with the fixtures' own checker (check.py, imported
from its path, its check_case() unchanged): missing must_keep lines and
must_keep_regex patterns, contradicted facts, structured payloads that are
not byte-identical, and commands that failed. It prints per case and per
family (meta.json's "family", else the case name before the first '_')
bytes in, bytes out and saved % for both, every case where either breaks
one of those rules, and totals.

Usage:
  python3 tools/peers/tokenjuice_compare.py --omni /path/to/omni \\
      --tokenjuice /tmp/tj/node_modules/.bin/tokenjuice [--cases DIR] [--check FILE] [--all] [--json]

Exit status: 0 when omni has no violation, 1 when it has some, 2 on a usage
or setup error. tokenjuice's violations are measured, not judged.
Standard library only.
"""
import argparse
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# The repository is ../.. from here; shared/ sits beside it.
DEFAULT_CASES = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "fixtures", "real"))


def reduce_one(argv):
    """--reduce-one mode: run tokenjuice reduce-json on one output file and
    print the inlineText exactly (the template check.py runs for tokenjuice)."""
    ap = argparse.ArgumentParser(prog="tokenjuice_compare.py --reduce-one")
    ap.add_argument("--tokenjuice", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--exit-code", type=int, required=True)
    ap.add_argument("file")
    a = ap.parse_args(argv)
    raw = open(a.file, "rb").read().decode("utf-8", "replace")
    payload = {"toolName": "exec", "command": a.command, "combinedText": raw, "exitCode": a.exit_code}
    p = subprocess.run([a.tokenjuice, "reduce-json", "--no-stats"], input=json.dumps(payload).encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.stderr.write(p.stderr.decode("utf-8", "replace"))
        return p.returncode
    reply = json.loads(p.stdout)
    sys.stdout.buffer.write(reply["inlineText"].encode("utf-8"))
    return 0


def load_check(path):
    spec = importlib.util.spec_from_file_location("fixtures_check", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def violation_kind(v):
    """The rule a check.py violation message breaks."""
    for k in ("missing must_keep_regex", "missing must_keep", "contradicted fact", "structured output not byte-identical"):
        if v.startswith(k):
            return "structured altered" if k.startswith("structured") else k
    return "failed run"


def pct(saved, total):
    return 100.0 * saved / total if total else 0.0


def brace(s):
    """Escape a literal for str.format (check.py fills the template with it)."""
    return s.replace("{", "{{").replace("}", "}}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--reduce-one":
        return reduce_one(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--omni", required=True, help="path of the omni binary (go build -o /tmp/omni ./cmd/omni)")
    ap.add_argument("--tokenjuice", required=True, help="path of the tokenjuice bin (npm install tokenjuice@0.8.5 -> node_modules/.bin/tokenjuice)")
    ap.add_argument("--cases", default=DEFAULT_CASES, help="fixtures folder (default: %(default)s)")
    ap.add_argument("--check", help="check.py to import (default: CASES/../check.py)")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--json", action="store_true", help="print one JSON object per case, then the totals")
    ap.add_argument("--all", action="store_true", help="list every missing line and pattern (default: counts and a few)")
    ap.add_argument("--examples", type=int, default=3, help="missing lines shown per case without --all (default: %(default)s)")
    a = ap.parse_args()

    cases_dir = os.path.abspath(a.cases)
    check_path = os.path.abspath(a.check or os.path.join(cases_dir, "..", "check.py"))
    omni = os.path.abspath(a.omni) if os.path.sep in a.omni else shutil.which(a.omni)
    tj = os.path.abspath(a.tokenjuice) if os.path.sep in a.tokenjuice else shutil.which(a.tokenjuice)
    for what, path in (("omni", omni), ("tokenjuice", tj), ("check.py", check_path)):
        if not path or not os.path.exists(path):
            print(f"{what} not found: {path}", file=sys.stderr)
            return 2
    check = load_check(check_path)
    cases = sorted(d for d in os.listdir(cases_dir) if os.path.isfile(os.path.join(cases_dir, d, "meta.json")))
    if not cases:
        print("no cases found in " + cases_dir, file=sys.stderr)
        return 2

    work = tempfile.mkdtemp(prefix="tj-compare-")
    omni_home = os.path.join(work, "omni-home")
    tj_home = os.path.join(work, "tj-home")
    os.makedirs(tj_home)
    # omni's store lives in a throwaway home; tokenjuice reads no user or
    # project rules (empty HOME, cwd without .tokenjuice) and records no stats.
    os.environ["OMNI_HOME"] = omni_home
    os.environ["HOME"] = tj_home
    os.environ["TOKENJUICE_STATS"] = "0"
    os.chdir(work)
    omni_tpl = brace(shlex.quote(omni)) + " distill --command {cmd} --exit-code {exit_code} {output_file}"
    tj_tpl = (brace(shlex.quote(sys.executable)) + " " + brace(shlex.quote(os.path.abspath(__file__))) +
              " --reduce-one --tokenjuice " + brace(shlex.quote(tj)) + " --command {cmd} --exit-code {exit_code} {output_file}")

    rows = []
    try:
        for c in cases:
            d = os.path.join(cases_dir, c)
            meta = json.load(open(os.path.join(d, "meta.json")))
            fam = meta.get("family") or c.split("_")[0]
            ro = check.check_case(d, omni_tpl, a.timeout)
            rt = check.check_case(d, tj_tpl, a.timeout)
            rows.append({"case": c, "family": fam, "exit_code": meta.get("exit_code"), "bytes_in": ro["bytes_in"],
                         "omni_out": ro["bytes_out"], "omni_violations": ro["violations"],
                         "tj_out": rt["bytes_out"], "tj_violations": rt["violations"]})
    finally:
        p = subprocess.run([omni, "daemon", "--stop"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        stopped = p.stderr.decode("utf-8", "replace").strip()
        shutil.rmtree(work, ignore_errors=True)

    tin = sum(r["bytes_in"] for r in rows)
    tout_o = sum(r["omni_out"] for r in rows)
    tout_t = sum(r["tj_out"] for r in rows)
    bad_o = [r for r in rows if r["omni_violations"]]
    bad_t = [r for r in rows if r["tj_violations"]]
    totals = {"cases": len(rows), "bytes_in": tin,
              "omni": {"bytes_out": tout_o, "saved_pct": round(pct(tin - tout_o, tin), 1), "violating_cases": len(bad_o),
                       "violations": sum(len(r["omni_violations"]) for r in rows)},
              "tokenjuice": {"bytes_out": tout_t, "saved_pct": round(pct(tin - tout_t, tin), 1), "violating_cases": len(bad_t),
                             "violations": sum(len(r["tj_violations"]) for r in rows)},
              "omni_daemon": stopped}
    if a.json:
        for r in rows:
            print(json.dumps(r))
        print(json.dumps(totals))
        return 1 if bad_o else 0

    def mark(v):
        return "ok" if not v else f"{len(v)} viol"

    print(f"omni {omni}; tokenjuice {tj}; cases {cases_dir}; checker {check_path}")
    print()
    print("per case (bytes; saved %; violations by check.py's rules)")
    print(f"{'case':34} {'family':13} {'exit':>4} {'in':>7} | {'omni':>7} {'saved':>6} {'':8} | {'tj':>7} {'saved':>6} {'':8}")
    for r in rows:
        print(f"{r['case']:34} {r['family'][:13]:13} {r['exit_code']:>4} {r['bytes_in']:>7} | "
              f"{r['omni_out']:>7} {pct(r['bytes_in'] - r['omni_out'], r['bytes_in']):5.1f}% {mark(r['omni_violations']):8} | "
              f"{r['tj_out']:>7} {pct(r['bytes_in'] - r['tj_out'], r['bytes_in']):5.1f}% {mark(r['tj_violations']):8}")

    fams = {}
    for r in rows:
        f = fams.setdefault(r["family"], {"cases": 0, "in": 0, "omni": 0, "tj": 0, "omni_bad": 0, "tj_bad": 0})
        f["cases"] += 1
        f["in"] += r["bytes_in"]
        f["omni"] += r["omni_out"]
        f["tj"] += r["tj_out"]
        f["omni_bad"] += bool(r["omni_violations"])
        f["tj_bad"] += bool(r["tj_violations"])
    print()
    print("per family")
    print(f"{'family':16} {'cases':>5} {'bytes in':>9} | {'omni out':>9} {'saved':>6} {'broken':>6} | {'tj out':>9} {'saved':>6} {'broken':>6}")
    for name in sorted(fams):
        f = fams[name]
        print(f"{name:16} {f['cases']:>5} {f['in']:>9} | {f['omni']:>9} {pct(f['in'] - f['omni'], f['in']):5.1f}% {f['omni_bad']:>6} | "
              f"{f['tj']:>9} {pct(f['in'] - f['tj'], f['in']):5.1f}% {f['tj_bad']:>6}")

    for who, key, bad in (("omni", "omni_violations", bad_o), ("tokenjuice", "tj_violations", bad_t)):
        print()
        print(f"{who}: {len(bad)} case(s) with violations" + ("" if a.all or not bad else
              " (per case: counts, every contradicted fact, structured change and failed run, and the first "
              f"{a.examples} missing lines; --all lists every one)"))
        for r in bad:
            kinds = {}
            for v in r[key]:
                kinds.setdefault(violation_kind(v), []).append(v)
            counts = ", ".join(f"{len(vs)} {k}" for k, vs in sorted(kinds.items()))
            print(f"  {r['case']} ({r['family']}, exit {r['exit_code']}): {counts}")
            shown = 0
            for v in r[key]:
                k = violation_kind(v)
                if a.all or k not in ("missing must_keep", "missing must_keep_regex"):
                    print("    - " + v)
                elif shown < a.examples:
                    print("    - " + v)
                    shown += 1
            hidden = 0 if a.all else sum(len(vs) for k, vs in kinds.items() if k.startswith("missing")) - shown
            if hidden > 0:
                print(f"    ... and {hidden} more missing line(s)/pattern(s)")

    print()
    print(f"totals: {len(rows)} cases, {tin} bytes in")
    print(f"  omni:       {tout_o:>7} bytes out, saved {pct(tin - tout_o, tin):.1f}%, {len(bad_o)} case(s) with violations "
          f"({totals['omni']['violations']} violations)")
    print(f"  tokenjuice: {tout_t:>7} bytes out, saved {pct(tin - tout_t, tin):.1f}%, {len(bad_t)} case(s) with violations "
          f"({totals['tokenjuice']['violations']} violations)")
    print(f"omni daemon --stop: {stopped or 'ok'}")
    return 1 if bad_o else 0


if __name__ == "__main__":
    sys.exit(main())
