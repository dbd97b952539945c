"""A run of bench_roofline_emu interrupted at a named moment (ctest label e2e).

usage: interrupt_checks.py BINARY SCHEMA MOMENT
The harness raises SIGINT itself at the moment RL_BENCH_TEST_INTERRUPT_AT
names (rl/bench/test_hooks.hpp), so the moment is exact and the check never
races a timer.  Whatever the moment, the run must exit 130 with one
"interrupted by SIGINT" line, results.json valid against the schema and
marked incomplete (run.complete false, interrupted_by SIGINT) listing what it
left out, benchmarks.json valid JSON marked incomplete
(context.bench_roofline_complete false) without the benchmarks that did not
finish, and the report saying the run is incomplete.
Exit 0: passed, 1: failed (reason printed).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

# Two kernels x two shapes, three repetitions each, sampled briefly; the
# ceiling moment adds the emulator's smallest ceiling in front of them.
KERNELS = "^scale_f32_"
ARGS = ["--size", "small", "--benchmark_repetitions=3", "--timeout=0.05"]

# moment -> (RL_BENCH_TEST_INTERRUPT_AT, filter, benchmarks selected, recorded)
MOMENTS = {
    # before the first benchmark starts: nothing measured
    "before_first_sample": ("start", KERNELS, 4, 0),
    # after the 2nd sample of the first repetition of the first benchmark
    "inside_a_repetition": ("sample:2", KERNELS, 4, 0),
    # after the 2nd of 3 repetitions: two timed repetitions and a skipped one
    # (Google Benchmark's statistics once aborted the process here)
    "between_repetitions": ("repetition:2", KERNELS, 4, 0),
    # after the first benchmark is recorded, before the second starts
    "between_benchmarks": ("benchmark:1", KERNELS, 4, 1),
    # inside the first ceiling's first repetition
    "during_the_ceilings": ("sample:2", "^hbm_write_vec16/|" + KERNELS, 5, 0),
    # everything measured; the signal comes while the chart and report are written
    "during_rendering": ("render", KERNELS, 4, 4),
}


def fail(message):
    print("FAILED: " + message)
    return 1


def schema_errors(schema_path, results):
    import jsonschema
    with open(schema_path, encoding="utf-8") as f:
        validator = jsonschema.Draft202012Validator(json.load(f))
    return ["/" + "/".join(map(str, e.absolute_path)) + ": " + e.message
            for e in validator.iter_errors(results)]


def check(binary, schema_path, moment):
    point, benchmark_filter, selected, recorded = MOMENTS[moment]
    program = os.path.basename(binary)
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run([binary, *ARGS, "--benchmark_filter=" + benchmark_filter, "--out", out],
                           capture_output=True, text=True, timeout=240,
                           env={**os.environ, "RL_BENCH_TEST_INTERRUPT_AT": point})
        if r.returncode != 130:
            return fail(f"exit {r.returncode}, expected 130; stderr {r.stderr[-2000:]!r}")
        said = [line for line in r.stderr.splitlines() if "interrupted by SIGINT" in line]
        if len(said) != 1 or not said[0].startswith(program + ": "):
            return fail(f"expected one '{program}: interrupted by SIGINT' line, got {said}")
        with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
            results = json.load(f)
        errors = schema_errors(schema_path, results)
        if errors:
            return fail("results.json violates the schema: " + "; ".join(errors[:5]))
        run = results["run"]
        if run.get("complete") is not False or run.get("interrupted_by") != "SIGINT":
            return fail(f"results.json run {run} is not marked interrupted")
        kernels = results["kernels"]
        if len(kernels) != recorded or any(k["status"] != "ok" for k in kernels):
            return fail(f"expected {recorded} finished kernel(s), got "
                        f"{[(k['name'], k['status']) for k in kernels]}")
        left_out = run.get("left_out", [])
        if len(left_out) != selected - recorded or any(
                item["reason"] != "interrupted" for item in left_out):
            return fail(f"expected the {selected - recorded} unmeasured benchmark(s) listed as "
                        f"left out (interrupted), got {left_out}")
        finished = [line for line in r.stderr.splitlines() if re.match(r"\[\d+/\d+\] ", line)]
        if len(finished) != recorded:
            return fail(f"{len(finished)} progress lines for {recorded} recorded kernel(s)")
        with open(os.path.join(out, "benchmarks.json"), encoding="utf-8") as f:
            gb = json.load(f)  # cut mid-object once: must parse
        if gb["context"].get("bench_roofline_complete") is not False:
            return fail("benchmarks.json is not marked incomplete")
        if gb["context"].get("bench_roofline_interrupted_by") != "SIGINT":
            return fail("benchmarks.json does not name the signal")
        names = {k["name"] + "/" + ",".join(f"{d}={v}" for d, v in k["shape"].items())
                 for k in kernels}
        stray = sorted({b["run_name"].split("/iterations:")[0] for b in gb["benchmarks"]} - names)
        if stray:
            return fail(f"benchmarks.json keeps benchmarks results.json does not record: {stray}")
        if any(b.get("error_occurred") for b in gb["benchmarks"]):
            return fail("benchmarks.json keeps skipped entries")
        with open(os.path.join(out, "report.html"), encoding="utf-8") as f:
            if "Incomplete run (interrupted by SIGINT)" not in f.read():
                return fail("report.html does not say the run is incomplete")
        if "interrupted" in r.stdout:
            return fail("the console lists the skipped benchmarks as errors")
        print(f"{moment}: exit 130, {recorded} kernel(s) kept, both JSON files valid and marked")
        return 0


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in MOMENTS:
        print(__doc__)
        return 2
    return check(sys.argv[1], sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    sys.exit(main())
