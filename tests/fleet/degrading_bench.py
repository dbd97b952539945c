#!/usr/bin/env python3
"""Test-only stand-in for bench_roofline in the `slurm` test (never used elsewhere).

Runs the real benchmark (FLEET_TEST_REAL_BENCH) with the same arguments, then,
in the Slurm array task named by FLEET_TEST_DEGRADE_TASK, scales every measured
rate of its results.json by FLEET_TEST_DEGRADE_FACTOR (times by the inverse), as
a GPU with a slow HBM stack or a low power cap would measure.  The task named by
FLEET_TEST_FAIL_TASK exits 1 without running, as a GPU that cannot run would.
"""
import json
import os
import subprocess
import sys


def out_dir(args):
    for i, a in enumerate(args):
        if a == "--out" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--out="):
            return a[len("--out="):]
    raise SystemExit("degrading_bench: no --out in the arguments")


def scale(path, factor):
    with open(path, encoding="utf-8") as f:
        r = json.load(f)
    for c in r["ceilings"]:
        for key in ("value", "best", "median"):
            if isinstance(c.get(key), (int, float)):
                c[key] *= factor
    for k in r["kernels"]:
        t = k.get("time_s")
        if not t:
            continue
        for key in ("median", "min", "max", "stddev"):
            t[key] /= factor
        t["samples"] = [s / factor for s in t["samples"]]
        k["achieved_flops_per_s"] *= factor
        k["achieved_bytes_per_s"] *= factor
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(r, f, indent=2)
    os.replace(tmp, path)


def main():
    task = os.environ.get("SLURM_ARRAY_TASK_ID", "")
    if task == os.environ.get("FLEET_TEST_FAIL_TASK"):
        print("degrading_bench: no CUDA device (simulated by the test)", file=sys.stderr)
        return 1
    args = sys.argv[1:]
    rc = subprocess.run([os.environ["FLEET_TEST_REAL_BENCH"], *args]).returncode
    if rc == 0 and task == os.environ.get("FLEET_TEST_DEGRADE_TASK"):
        scale(os.path.join(out_dir(args), "results.json"),
              float(os.environ["FLEET_TEST_DEGRADE_FACTOR"]))
    return rc


if __name__ == "__main__":
    sys.exit(main())
