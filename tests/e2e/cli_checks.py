"""End-to-end checks of bench_roofline / bench_roofline_emu (ctest label e2e).

usage: cli_checks.py CHECK BINARY [ARGS...]
Exit 0: passed, 1: failed (reason printed), 77: skipped (reason printed).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def run(binary, *args, env=None, timeout=600):
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def program(binary):
    return os.path.basename(binary)


def fail(message):
    print("FAILED: " + message)
    return 1


def expect_one_line_error(binary, args, must_contain):
    """Bad input: exit 2, exactly one line '<program>: ...' on stderr, nothing on stdout."""
    r = run(binary, *args)
    lines = r.stderr.splitlines()
    if r.returncode != 2:
        return fail(f"{args}: exit {r.returncode}, expected 2; stderr: {r.stderr!r}")
    if len(lines) != 1 or not lines[0].startswith(program(binary) + ": "):
        return fail(f"{args}: expected one line '{program(binary)}: ...', got {r.stderr!r}")
    if must_contain not in lines[0]:
        return fail(f"{args}: {lines[0]!r} does not mention {must_contain!r}")
    if r.stdout:
        return fail(f"{args}: unexpected stdout {r.stdout!r}")
    print(lines[0])
    return 0


def check_help(binary):
    r = run(binary, "--help")
    if r.returncode != 0:
        return fail(f"--help exited {r.returncode}: {r.stderr}")
    text = r.stdout + r.stderr
    ours = ["--size", "--out", "--warm-l2", "--seed", "--list", "--ceilings-only"]
    theirs = ["--benchmark_filter", "--benchmark_repetitions", "--benchmark_min_time",
              "--benchmark_out", "--benchmark_format"]
    missing = [flag for flag in ours + theirs if flag not in text]
    return fail(f"--help lacks {missing}") if missing else 0


def check_bad_flag(binary):
    return expect_one_line_error(binary, ["--bogus"], "--bogus")


def check_bad_benchmark_flag(binary):
    return expect_one_line_error(binary, ["--benchmark_fliter=scale"], "--benchmark_fliter")


def check_bad_size(binary):
    return expect_one_line_error(binary, ["--size", "huge"], "huge")


def check_unwritable_out(binary):
    with tempfile.TemporaryDirectory() as tmp:
        blocker = os.path.join(tmp, "a_file")
        with open(blocker, "w") as f:
            f.write("not a directory")
        return expect_one_line_error(binary, ["--out", os.path.join(blocker, "run")], blocker)


def gpu_visible():
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    return subprocess.run([smi, "-L"], capture_output=True).returncode == 0


def check_no_gpu_message(binary):
    if gpu_visible():
        print("SKIPPED: a GPU is visible (nvidia-smi -L works); the no-device message cannot occur")
        return SKIP
    r = run(binary, "--size", "small")
    lines = r.stderr.splitlines()
    prefix = "bench_roofline: no CUDA device available ("
    suffix = "); run bench_roofline_emu to exercise the suite on the CPU emulator"
    if r.returncode != 2:
        return fail(f"exit {r.returncode}, expected 2; stderr {r.stderr!r}")
    if len(lines) != 1 or not lines[0].startswith(prefix) or not lines[0].endswith(suffix):
        return fail(f"expected the one no-device line, got {r.stderr!r}")
    if r.stdout:
        return fail(f"unexpected stdout {r.stdout!r}")
    print(lines[0])
    return 0


CHECKS = {
    "help": check_help,
    "bad_flag": check_bad_flag,
    "bad_benchmark_flag": check_bad_benchmark_flag,
    "bad_size": check_bad_size,
    "unwritable_out": check_unwritable_out,
    "no_gpu_message": check_no_gpu_message,
}


def main():
    check, binary, *rest = sys.argv[1:]
    return CHECKS[check](binary, *rest)


if __name__ == "__main__":
    sys.exit(main())
