"""End-to-end: scripts/emulator-run's node pass runs the NCCL records on the
emulator's NCCL and its report draws every busbw curve.

usage: nccl_emulated_node_e2e.py BINARY EMULATOR_RUN
Runs `scripts/emulator-run BINARY --family node --no-ceilings` (with the
quickest sampling; the records and folders are the script's own).  Pass 1 (one
device) lists every node_nccl_* record as skipped for needing 2 devices.  The
node pass (OUT/node-8-devices/) validates and times each at every size of the
small preset that splits over 8 ranks (the others refused with that reason),
records them as the emulator's NCCL (library and method), and its report.html
has each record's busbw table with one row per timed instance, under the
emulated-devices banner.
Exit 0: passed, 1: failed (reason printed).
"""
import os
import re
import subprocess
import sys
import tempfile

from rltest import Failure, check, load

RECORDS = ["node_nccl_all_reduce", "node_nccl_all_gather", "node_nccl_reduce_scatter",
           "node_nccl_alltoall", "node_nccl_broadcast"]
QUICK = ["--min-samples", "1", "--max-noise", "100", "--timeout", "0.01"]
# Sizes of the small preset (8 B to 1 MiB) that do not split into 8 float32 chunks.
UNSPLIT = "does not split into 8 equal float32 chunks, one per rank"


def nccl_results(path):
    return [k for k in load(path)["kernels"] if k["name"].startswith("node_nccl_")]


def check_pass_one(out):
    kernels = nccl_results(os.path.join(out, "results.json"))
    check(sorted({k["name"] for k in kernels}) == sorted(RECORDS),
          f"pass 1 lists {sorted({k['name'] for k in kernels})}")
    for k in kernels:
        check(k["status"] == "skipped" and k["error"].startswith("needs 2 devices"),
              f"pass 1, {k['name']} {k['shape']}: {k['status']} {k['error']!r}")


def check_node_pass(folder):
    kernels = nccl_results(os.path.join(folder, "results.json"))
    with open(os.path.join(folder, "report.html"), encoding="utf-8") as f:
        html = f.read()
    check("Emulated devices" in html, "the node report has no emulated-devices banner")
    for name in RECORDS:
        got = [k for k in kernels if k["name"] == name]
        timed = [k for k in got if k["status"] == "ok"]
        for k in got:
            if k["status"] == "ok":
                check(k["validated"], f"{name} {k['shape']}: timed but not validated")
                check(k["library"] == "NCCL (emulated)", f"{name}: library {k['library']!r}")
                check("emulated" in k["method"] and "8 ranks" in k["method"],
                      f"{name}: method {k['method']!r} does not say the emulator's NCCL, 8 ranks")
            else:
                check(k["status"] == "skipped" and UNSPLIT in k["error"],
                      f"{name} {k['shape']}: {k['status']} {k.get('error')!r}")
        # 18 sizes; the chunked ones lose 8 B and 16 B; alltoall is out of place only.
        per_size = 1 if name.endswith("alltoall") else 2
        sizes = 16 if name.endswith(("gather", "scatter", "alltoall")) else 18
        check(len(timed) == sizes * per_size, f"{name}: {len(timed)} timed instances, "
              f"expected {sizes * per_size}")
        # The curve: the record's heading, then its table, one row per instance.
        m = re.search(rf"<h3>{name}</h3>(.*?)</table>", html, re.S)
        check(m is not None, f"report.html has no busbw curve for {name}")
        check("(emulated:" in m.group(1),
              f"{name}: the curve does not say, beside it, that the emulator's NCCL ran it")
        rows = m.group(1).count('<tr><td class="num">')
        check(rows == len(timed), f"{name}: {rows} rows in the report, {len(timed)} timed")


def main():
    binary, emulator_run = sys.argv[1:]
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "out")
        r = subprocess.run([emulator_run, binary, "--family", "node", "--no-ceilings", *QUICK,
                            "--out", out], capture_output=True, text=True, timeout=300,
                           env={k: v for k, v in os.environ.items() if not k.startswith("RL_EMU_")})
        try:
            check(r.returncode == 0, f"exit {r.returncode}; stderr {r.stderr[-2000:]!r}")
            check_pass_one(out)
            check_node_pass(os.path.join(out, "node-8-devices"))
        except Failure as e:
            print(f"FAILED: {e}")
            return 1
    print("pass 1 skips the 5 NCCL records (needs 2 devices); the node pass validates them on "
          "the emulator's NCCL and its report draws all 5 busbw curves, a row per instance")
    return 0


if __name__ == "__main__":
    sys.exit(main())
