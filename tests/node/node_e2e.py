"""End-to-end: bench_roofline_emu --family node on an emulated node of 8 devices.

usage: node_e2e.py BINARY SCHEMA
Every SM record (copies and chases) is validated and timed at every shape of
the small preset: all 56 ordered pairs for the peer records, every device for
the others; the copy-engine records are skipped as GPU-only; the run exits 0
and results.json (schema-valid) holds them.  Then on one device: the records
that need two are in results.json as skipped with the reason.
Exit 0: passed, 1: failed (reason printed).
"""
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

PAIR_RECORDS = ["node_peer_sm_read", "node_peer_sm_write", "node_peer_sm_bidir",
                "node_peer_latency_sm"]
DEVICE_RECORDS = ["node_h2d_sm", "node_d2h_sm", "node_all_to_one_sm_write",
                  "node_one_to_all_sm_write", "node_host_latency_sm"]
CE_RECORDS = ["node_h2d_ce_pinned", "node_d2h_ce_pinned", "node_h2d_ce_pageable",
              "node_d2h_ce_pageable", "node_bidir_host_ce_pinned", "node_peer_ce_write",
              "node_peer_ce_read", "node_peer_ce_bidir"]
# The quickest sampling the harness takes: one repetition of one sample per kind.
FAST = ["--size", "small", "--family", "node", "--no-ceilings", "--benchmark_repetitions=1",
        "--min-samples", "1", "--max-noise", "100", "--timeout", "0.01"]


def run_node(binary, devices, out):
    r = subprocess.run([binary, *FAST, "--out", out], capture_output=True, text=True,
                       timeout=240, env={**os.environ, "RL_EMU_DEVICES": str(devices)})
    if r.returncode != 0:
        return r, None
    with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
        return r, json.load(f)


def schema_errors(schema_path, results):
    with open(schema_path, encoding="utf-8") as f:
        validator = jsonschema.Draft202012Validator(json.load(f))
    return [e.message for e in validator.iter_errors(results)][:5]


def by_name(results):
    kernels = {}
    for k in results["kernels"]:
        kernels.setdefault(k["name"], []).append(k)
    return kernels


def check_eight(binary, schema_path):
    with tempfile.TemporaryDirectory() as out:
        r, results = run_node(binary, 8, out)
        if r.returncode != 0:
            return f"8 devices: exit {r.returncode}; stderr {r.stderr[-2000:]!r}"
        errors = schema_errors(schema_path, results)
        if errors:
            return f"results.json violates the schema: {errors}"
        kernels = by_name(results)
        want_pairs = sorted((s, d) for s in range(8) for d in range(8) if s != d)
        # Both directions at once measure the pair, not an order: src < dst.
        want_unordered = [(s, d) for s, d in want_pairs if s < d]
        for name in PAIR_RECORDS + DEVICE_RECORDS:
            got = kernels.get(name, [])
            bad = [(k["shape"], k["status"], k.get("error")) for k in got
                   if k["status"] != "ok" or not k["validated"]]
            if bad:
                return f"{name}: not validated and timed: {bad[:3]}"
            if name in PAIR_RECORDS:
                pairs = sorted((k["shape"]["src"], k["shape"]["dst"]) for k in got)
                want = want_unordered if name.endswith("_bidir") else want_pairs
                if pairs != want:
                    return f"{name}: pairs {pairs}, expected {len(want)} pairs"
            elif sorted(k["shape"]["device"] for k in got) != list(range(8)):
                return f"{name}: devices {[k['shape'] for k in got]}, expected 0..7"
        for name in CE_RECORDS:
            got = kernels.get(name, [])
            if not got or any(k["status"] != "skipped" or "GPU-only" not in k["error"]
                              for k in got):
                return f"{name}: expected skipped as GPU-only, got {got[:1]}"
        return None


def check_one(binary):
    with tempfile.TemporaryDirectory() as out:
        r, results = run_node(binary, 1, out)
        if r.returncode != 0:
            return f"1 device: exit {r.returncode}; stderr {r.stderr[-2000:]!r}"
        kernels = by_name(results)
        for name in PAIR_RECORDS + ["node_all_to_one_sm_write", "node_one_to_all_sm_write"]:
            got = kernels.get(name, [])
            if [k["error"] for k in got] != ["needs 2 devices; this machine has 1 (the emulator "
                                             "runs it as a node with RL_EMU_DEVICES=8, as "
                                             "scripts/run does)"]:
                return f"{name} on 1 device: {got}"
        for name in ["node_h2d_sm", "node_d2h_sm", "node_host_latency_sm"]:
            if [k["status"] for k in kernels.get(name, [])] != ["ok"]:
                return f"{name} on 1 device: {kernels.get(name)}"
        return None


def main():
    binary, schema_path = sys.argv[1:]
    why = check_eight(binary, schema_path) or check_one(binary)
    if why:
        print("FAILED: " + why)
        return 1
    print("8 devices: 3 pair records x 56 ordered pairs, the bidirectional one x 28 pairs, "
          "and 5 device records x 8 devices validated "
          "and timed, copy-engine records skipped as GPU-only; 1 device: the 6 records that "
          "need 2 skipped with the reason")
    return 0


if __name__ == "__main__":
    sys.exit(main())
