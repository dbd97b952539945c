#!/usr/bin/env python3
"""SUMMARY.md of a scripts/gpu_validate output folder, on stdout.

    scripts/gpu_validate_summary.py OUT_DIR

Reads what the steps left there: state.env, steps/<step>.tsv, bench/results.json,
junit/ctest-*.xml, system/.  Sections: each step's outcome, the claim verdict of
every measured ceiling, how the run ended (complete or not, and what it says it
left out), the records that failed or were skipped with their reasons, and the
hardware-only tests (label gpu) that passed or failed."""

import glob
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

STEPS = ("build", "test", "bench", "report")


def read_state(out):
    state = {}
    if os.path.isfile(os.path.join(out, "state.env")):
        for line in open(os.path.join(out, "state.env")):
            key, _, value = line.rstrip("\n").partition("=")
            state[key] = value  # the last line wins
    return state


def step_rows(out):
    rows = []
    for step in STEPS:
        path = os.path.join(out, "steps", step + ".tsv")
        if os.path.isfile(path):
            fields = open(path).read().rstrip("\n").split("\t") + ["", "", ""]
            rows.append((step, fields[1], fields[2], fields[3]))
        else:
            rows.append((step, "not run", "", "no record in this folder"))
    return rows


def si(value, unit):
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):
        if abs(value) >= scale:
            return "%.3g %s%s" % (value / scale, prefix, unit)
    return "%.3g %s" % (value, unit)


def verdict(ceiling):
    """As roofline's verdict_line: measured, % of the datasheet claim, % of the derived peak."""
    value, unit = ceiling.get("value") or 0, ceiling.get("unit", "")
    if value <= 0:
        return "%s: not measured" % ceiling.get("name")
    line = "%s: %s" % (ceiling.get("name"), si(value, unit))
    claim = ceiling.get("datasheet")
    if claim:
        line += " = %.0f%% of the %s claim" % (100 * value / claim, si(claim, unit))
    else:
        line += " (no datasheet figure for this device)"
    derived = ceiling.get("derived_peak")
    if derived:
        mhz = ceiling.get("observed_sm_mhz")
        at = " at the %.0f MHz seen" % mhz if mhz else ""
        line += "; derived peak%s: %s (%.0f%%)" % (at, si(derived, unit), 100 * value / derived)
    reasons = ceiling.get("throttle_reasons") or []
    if reasons:
        line += "; throttled: " + ", ".join(reasons)
    return line


def results_sections(out):
    path = os.path.join(out, "bench", "results.json")
    if not os.path.isfile(path):
        return ["## Claim verdicts", "", "none: no bench/results.json in this folder.", ""]
    try:
        results = json.load(open(path))
    except ValueError as error:
        return ["## Claim verdicts", "", "none: bench/results.json is not valid JSON (%s)." % error,
                ""]
    context, run = results.get("context", {}), results.get("run", {}) or {}
    device = context.get("device", {})
    lines = ["## Claim verdicts", ""]
    ceilings = results.get("ceilings", [])
    if context.get("backend") == "emulator":
        lines.append("none: an emulator run (%d ceilings measured in CPU time, which no datasheet "
                     "claims); on a GPU each ceiling is judged against the matched SKU's figure."
                     % len(ceilings))
    elif not ceilings:
        lines.append("none: no ceiling was measured (see logs/bench.log).")
    else:
        lines.append("%s (cc %s, %s SMs); ceilings measured: %d" % (
            device.get("name"), device.get("compute_capability"), device.get("sm_count"),
            len(ceilings)))
        lines.append("")
        lines += ["- " + verdict(c) for c in ceilings]
    lines += ["", "## The run", ""]
    complete = run.get("complete")
    if complete:
        lines.append("complete: every selected benchmark ran.")
    else:
        how = run.get("interrupted_by") or ("crashed or still running" if complete is False
                                             else "not recorded")
        lines.append("**incomplete** (run.complete = %s; interrupted by: %s): only what "
                     "finished is in results.json." % (json.dumps(complete), how))
        for key, value in run.items():
            if key not in ("complete", "interrupted_by", "command_line", "settings") and value:
                lines.append("- run.%s: %s" % (key, json.dumps(value)))
        lines += left_out(out, results)
    lines.append("")
    kernels = results.get("kernels", [])
    bad = [k for k in kernels if (k.get("status") or "ok") != "ok" or not k.get("validated", True)]
    ok = len(kernels) - len(bad)
    lines += ["## Records failed or skipped", "",
              "%d records: %d ok, %d failed or errored, %d skipped." % (
                  len(kernels), ok, sum(1 for k in bad if k.get("status") != "skipped"),
                  sum(1 for k in bad if k.get("status") == "skipped")), ""]
    if bad:
        lines += ["| record | shape | status | reason |", "|---|---|---|---|"]
        for k in bad:
            shape = ",".join("%s=%s" % kv for kv in (k.get("shape") or {}).items())
            status = k.get("status") or "failed_validation"
            reason = (k.get("error") or "max_rel_err %s" % k.get("max_rel_err")).replace("|", "/")
            lines.append("| %s | %s | %s | %s |" % (k.get("name"), shape, status, reason))
        lines.append("")
    return lines


def left_out(out, results):
    """The instances `--list` planned (logs/bench-list.txt, same selection) that
    results.json does not hold, as one line; the harness's own list
    (run.left_out: name, shape, reason) when results.json has one."""
    recorded = (results.get("run") or {}).get("left_out")
    if recorded:
        items = [("%s %s (%s)" % (e.get("name"),
                                  ",".join("%s=%s" % kv for kv in (e.get("shape") or {}).items()),
                                  e.get("reason")) if isinstance(e, dict) else str(e))
                 for e in recorded]
        shown = ", ".join(items[:40]) + (" and %d more" % (len(items) - 40) if len(items) > 40
                                         else "")
        return ["- left out (results.json run.left_out): %d: %s" % (len(items), shown)]
    path = os.path.join(out, "logs", "bench-list.txt")
    if not os.path.isfile(path):
        return []
    done = {(k.get("name"), frozenset("%s=%s" % kv for kv in (k.get("shape") or {}).items()))
            for k in results.get("kernels", [])}
    pattern = ((results.get("run") or {}).get("settings") or {}).get("filter") or ""
    missing = []
    for line in open(path).read().splitlines()[1:]:
        fields = line.split()
        if len(fields) < 6:
            continue
        name, shape = fields[0], fields[5]
        try:
            if pattern and not re.search(pattern, name + "/" + shape):
                continue
        except re.error:
            pass
        if (name, frozenset(shape.split(","))) not in done:
            missing.append("%s %s" % (name, shape))
    if not missing:
        return []
    shown = ", ".join(missing[:40]) + (" and %d more" % (len(missing) - 40) if len(missing) > 40
                                       else "")
    return ["- left out (planned by --list, not in results.json): %d: %s" % (len(missing), shown)]


def skip_reason(case):
    """ " (why)" from a skipped test's output: the line after gtest's "...: Skipped"."""
    out = case.find("system-out")
    lines = (out.text or "").splitlines() if out is not None else []
    for i, line in enumerate(lines[:-1]):
        if line.rstrip().endswith("Skipped") and lines[i + 1].strip():
            return " (%s)" % lines[i + 1].strip()
    return ""


def junit_counts(path):
    """(passed, failed, skipped names...) of a ctest JUnit file."""
    passed, failed, skipped = [], [], []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name", "?")
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(name)
        elif case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
            skipped.append(name + skip_reason(case))
        else:
            passed.append(name)
    return passed, failed, skipped


def test_sections(out):
    lines = ["## Hardware-only tests (ctest -L gpu)", ""]
    gpu_xml = os.path.join(out, "junit", "ctest-gpu.xml")
    skipped_note = os.path.join(out, "junit", "ctest-gpu.skipped.txt")
    if os.path.isfile(gpu_xml):
        lines += junit_lines(gpu_xml, list_passed=True)
    elif os.path.isfile(skipped_note):
        lines.append(open(skipped_note).read().strip())
    else:
        lines.append("not run: no junit/ctest-gpu.xml in this folder.")
    lines.append("")
    for path in sorted(glob.glob(os.path.join(out, "junit", "ctest-*.xml"))):
        if path != gpu_xml:
            label = os.path.basename(path)[len("ctest-"):-len(".xml")]
            lines += ["## Other tests (ctest -L %s)" % label, ""] + junit_lines(path) + [""]
    return lines


def junit_lines(path, list_passed=False):
    try:
        passed, failed, skipped = junit_counts(path)
    except (ET.ParseError, OSError) as error:
        return ["unreadable %s: %s" % (os.path.basename(path), error)]
    lines = ["%d passed, %d failed, %d skipped (%s)." % (
        len(passed), len(failed), len(skipped), os.path.relpath(path, os.path.dirname(
            os.path.dirname(path))))]
    for title, names in (("failed", failed), ("skipped", skipped),
                         ("passed", passed if list_passed else [])):
        if names:
            lines.append("- %s: %s" % (title, ", ".join(names)))
    return lines


def device_facts(out):
    """The nvidia-smi files (written, or why skipped) and the versions, inline."""
    lines = ["## Device facts and versions", ""]
    for name in ("nvidia-smi-q.txt", "nvidia-smi-topo.txt"):
        path = os.path.join(out, "system", name)
        first = open(path).readline().strip() if os.path.isfile(path) else "missing"
        lines.append("- system/%s: %s" % (name, first if first.startswith("skipped")
                                          or first == "missing" else "written"))
    path = os.path.join(out, "system", "versions.txt")
    if os.path.isfile(path):
        lines += ["- " + line.strip() for line in open(path)
                  if line.strip() and not line.startswith("#")]
    else:
        lines.append("- system/versions.txt: missing")
    return lines + [""]


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: gpu_validate_summary.py OUT_DIR", file=sys.stderr)
        return 2
    out = argv[1]
    state = read_state(out)
    lines = ["# gpu_validate summary", "",
             "- mode: %s" % state.get("mode", "?"),
             "- device: %s" % state.get("device", "?"),
             "- compute capability: %s; CUDA architecture built: %s" % (
                 state.get("compute_capability", "?"), state.get("arch", "?")),
             "- commit: %s; started (UTC): %s; build folder: %s" % (
                 state.get("commit", "?"), state.get("started_utc", "?"),
                 state.get("build_dir", "?")), "",
             "## Steps", "", "| step | outcome | seconds | note |", "|---|---|---|---|"]
    for step, outcome, seconds, note in step_rows(out):
        lines.append("| %s | %s | %s | %s |" % (step, outcome, seconds, note.replace("|", "/")))
    lines.append("")
    lines += results_sections(out)
    lines += test_sections(out)
    lines += device_facts(out)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
