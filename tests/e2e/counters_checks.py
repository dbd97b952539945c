"""bench_roofline_emu --counters end to end (ctest label e2e).

usage: counters_checks.py BINARY SCHEMA
A small filtered run (one mma.sync GEMM at a tile-multiple shape, one vec128
GELU) with --counters, and the same without it.  Protects: every timed kernel
carries the emulator's counts (source "emulator", one pass, no reason they
are missing); the GEMM's tensor operations are one launch's worth, 2*M*N*K,
so the timed launches (dozens here) were not counted; each quantity the cost
model declares is compared, exactly, and agrees; results.json stays
schema-valid; without --counters no kernel has a "counters" key.
Exit 0: passed, 1: failed (reason printed).
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_checks import fail, load_schema_valid_results, run  # noqa: E402

GEMM = "gemm_mma_sync_multistage_fp16"
GELU = "gelu_tanh_f32_vec4"
# A multiple of the rung's 128 x 128 block tile and of its k-tile: no padded
# edge tiles, so its tensor operations are exactly 2*M*N*K.  The GELU at a
# multiple of its 4-float vector: no scalar tail, so its model declares its
# L2 loads and stores (gelu_cost.hpp), and all three L2 quantities are compared.
M, N, K = 128, 128, 64
ARGS = ["--size", "small", "--no-ceilings", f"--shape=gemm:M={M},N={N},K={K}",
        "--shape=gelu:n=4096",
        f"--benchmark_filter=^({GEMM}|{GELU})/", "--benchmark_repetitions=2",
        "--timeout=0.05", "--min-samples=3"]


def kernels_of(binary, schema, *flags):
    """(kernels by name, stderr, None) or (None, None, why) for one run."""
    with tempfile.TemporaryDirectory() as out:
        r = run(binary, *ARGS, *flags, "--out", out)
        if r.returncode != 0:
            return None, None, f"{flags}: exit {r.returncode}; stderr {r.stderr!r}"
        results, why = load_schema_valid_results(out, schema)
        if why:
            return None, None, f"{flags}: {why}"
        kernels = {k["name"]: k for k in results["kernels"]}
        said = results["run"]["settings"].get("counters")
        if said is not ("--counters" in flags):
            return None, None, f"{flags}: run.settings.counters is {said!r}"
        if sorted(kernels) != sorted([GEMM, GELU]):
            return None, None, f"{flags}: kernels {sorted(kernels)}, expected {GEMM} and {GELU}"
        for k in kernels.values():
            if k["status"] != "ok":
                return None, None, f"{flags}: {k['name']}: {k['status']}: {k.get('error')}"
        return kernels, r.stderr, None


def check_counted(kernels, stderr):
    if "counters unavailable" in stderr:
        return f"the emulator's session said it cannot count: {stderr!r}"
    for name, k in kernels.items():
        c = k.get("counters")
        if c is None:
            return f"{name} has no counters"
        if c.get("source") != "emulator" or c.get("passes") != 1 or c.get("unavailable"):
            return f"{name}: counters {c}"
        v = c["values"]
        if v.get("l2_bytes") != v.get("l2_load_bytes", 0) + v.get("l2_store_bytes", 0):
            return f"{name}: l2_bytes is not l2_load_bytes + l2_store_bytes: {v}"
        if not v.get("l2_bytes", 0) > 0:
            return f"{name}: no global bytes counted through its copy paths: {v}"
        # Compared with each quantity the model declares, and equal: the
        # emulator's counts are exact (tolerance 0), so a difference is a
        # wrong model (or a kernel that bypasses the counted copy paths).
        declared = {"tensor_ops": "tensor_ops", "bytes_l2_load": "l2_load_bytes",
                    "bytes_l2_store": "l2_store_bytes"}
        want = {quantity for field, quantity in declared.items() if field in k}
        if "bytes_l2_load" in k and "bytes_l2_store" in k:
            want.add("l2_bytes")
        got = {comparison["quantity"]: comparison for comparison in c["comparisons"]}
        if set(got) != want:
            return f"{name}: compared {sorted(got)}, expected {sorted(want)} from its model"
        # Not vacuous: these two models declare what the emulator counts.
        if not want:
            return f"{name}: its model declares nothing the counts check: {k}"
        for comparison in got.values():
            if not comparison["agrees"] or comparison["tolerance"] != 0:
                return f"{name}: {comparison}"
    timed = kernels[GEMM]["time_s"]["samples_taken"]
    tensor = {key: value for key, value in kernels[GEMM]["counters"]["values"].items()
              if key.startswith("tensor_")}
    if tensor != {"tensor_fp16_f32": 2.0 * M * N * K}:
        return (f"{GEMM}: tensor ops {tensor}, expected one launch's "
                f"{{'tensor_fp16_f32': {2 * M * N * K}}} ({timed} timed samples)")
    gelu = [key for key in kernels[GELU]["counters"]["values"] if key.startswith("tensor_")]
    if gelu:
        return f"{GELU} counted tensor operations {gelu}"
    return None


def main():
    binary, schema = sys.argv[1:3]
    counted, stderr, why = kernels_of(binary, schema, "--counters")
    if why:
        return fail(why)
    why = check_counted(counted, stderr)
    if why:
        return fail(why)
    plain, _, why = kernels_of(binary, schema)
    if why:
        return fail(why)
    with_key = [name for name, k in plain.items() if "counters" in k]
    if with_key:
        return fail(f"without --counters, {with_key} have a counters key")
    print(f"{GEMM}: {counted[GEMM]['counters']['values']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
