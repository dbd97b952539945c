"""End-to-end checks of bench_roofline / bench_roofline_emu (ctest label e2e).

usage: cli_checks.py CHECK BINARY [ARGS...]
Exit 0: passed, 1: failed (reason printed), 77: skipped (reason printed).
"""
import json
import os
import re
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


def expect_one_line_error(binary, args, must_contain, env=None):
    """Bad input: exit 2, exactly one line '<program>: ...' on stderr, nothing on stdout."""
    r = run(binary, *args, env=env)
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
    ours = ["--size", "--out", "--warm-l2", "--seed", "--list", "--ceilings-only",
            "--no-ceilings", "--family", "--shape", "--dump-tensors", "--max-noise",
            "--timeout", "--min-samples", "--ceilings-from"]
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


def check_version(binary):
    r = run(binary, "--version")
    if r.returncode != 0:
        return fail(f"--version exited {r.returncode}: {r.stderr!r}")
    first = r.stdout.splitlines()[0] if r.stdout else ""
    if not re.fullmatch(re.escape(program(binary)) + r" \d+\.\d+\.\d+", first):
        return fail(f"first line {first!r} is not '<program> <version>'")
    for field in ("git commit:", "build type:", "CUDA toolkit:", "backends built:"):
        if field not in r.stdout:
            return fail(f"--version lacks {field!r}: {r.stdout!r}")
    print(r.stdout.strip())
    return 0


def check_filter_selecting_nothing(binary):
    """A typo in the filter is bad input: one line, exit 2, no folder, no files."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        why = expect_one_line_error(binary, ["--benchmark_filter=^no_such_kernel", "--out", out],
                                    "selects no kernel")
        if why:
            return why
        if os.path.exists(out):
            return fail(f"{out} was created for a run that selected nothing")
        return 0


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


# The fields Google Benchmark's tools/compare.py (gbench/util.py, report.py)
# reads from a JSON file.
GB_COMMON_FIELDS = ["name", "run_name", "run_type", "family_index", "per_family_instance_index",
                    "repetitions", "real_time", "cpu_time", "time_unit"]
GB_ITERATION_FIELDS = ["repetition_index", "iterations"]
GB_AGGREGATE_FIELDS = ["aggregate_name"]

EMU_RUN_ARGS = ["--size", "small", "--benchmark_filter=^scale_f32_", "--benchmark_repetitions=3",
                "--timeout=0.05"]


def schema_errors(schema_path, results):
    import jsonschema
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    return ["/" + "/".join(map(str, e.absolute_path)) + ": " + e.message
            for e in validator.iter_errors(results)]


def load_schema_valid_results(out, schema_path):
    """(results, None) or (None, why) for <out>/results.json."""
    with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
        results = json.load(f)
    errors = schema_errors(schema_path, results)
    if errors:
        return None, "results.json violates the schema: " + "; ".join(errors[:5])
    return results, None


def git_commit_mismatch(recorded):
    """Why the recorded commit is not the checkout's HEAD (None when it is).

    The stamp is made at build time, so the binary names the commit it was
    built from even after later commits (scripts/test builds before testing).
    """
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=repo,
                          capture_output=True, text=True)
    if head.returncode != 0:
        return None if recorded == "unknown" else f"git_commit {recorded!r} outside a checkout"
    if not re.fullmatch(r"[0-9a-f]{12}(-dirty|-unknown-state)?", recorded or ""):
        return f"git_commit {recorded!r} is not <12-hex-sha>[-dirty|-unknown-state]"
    if recorded.split("-")[0] != head.stdout.strip():
        return f"git_commit {recorded!r} is not HEAD {head.stdout.strip()} (stale build stamp?)"
    return None


def check_emu_run(binary, schema_path):
    with tempfile.TemporaryDirectory() as out:
        r = run(binary, *EMU_RUN_ARGS, "--out", out)
        if r.returncode != 0:
            return fail(f"exit {r.returncode}; stderr {r.stderr!r}")
        if out not in r.stdout:
            return fail(f"the summary does not name the output folder {out}: {r.stdout!r}")
        results, why = load_schema_valid_results(out, schema_path)
        if why:
            return fail(why)
        if results["context"]["backend"] != "emulator":
            return fail(f"context.backend is {results['context']['backend']!r}")
        why = git_commit_mismatch(results["context"].get("git_commit"))
        if why:
            return fail(why)
        names = sorted((k["name"], k["shape"]["n"]) for k in results["kernels"])
        want = sorted((name, n) for name in ("scale_f32_scalar", "scale_f32_vec4")
                      for n in (1000, 4097))
        if names != want:
            return fail(f"kernels {names}, expected {want}")
        for k in results["kernels"]:
            if k["status"] != "ok" or not k["validated"]:
                return fail(f"{k['name']} n={k['shape']['n']}: status {k['status']}: {k['error']}")
            t = k["time_s"]
            if t["repetitions"] != 3 or len(t["samples"]) != 3:
                return fail(f"{k['name']}: {t['repetitions']} repetitions, expected 3")
            if not (0 < t["min"] <= t["median"] <= t["max"]):
                return fail(f"{k['name']}: inconsistent time_s {t}")
            n = k["shape"]["n"]
            if k["flops"] != n or k["bytes_model"] != 8 * n:
                return fail(f"{k['name']}: cost {k['flops']}, {k['bytes_model']} for n={n}")
            rate = k["bytes_model"] / t["median"]
            if abs(k["achieved_bytes_per_s"] - rate) > 1e-9 * rate:
                return fail(f"{k['name']}: achieved_bytes_per_s is not bytes_model / median")
        if results.get("run", {}).get("complete") is not True:
            return fail(f"a finished run is not marked complete: {results.get('run')}")
        for k in results["kernels"]:
            t, other = k["time_s"], k.get("other_time_s")
            if t.get("kind") != "cold" or not other or other.get("kind") != "batch":
                return fail(f"{k['name']}: expected cold time_s and batch other_time_s")
            if k.get("l2_flushed") is not True or t["launches_per_sample"] != 1:
                return fail(f"{k['name']}: cold samples are one launch after a flush")
            if t["samples_taken"] < 3 or t["noise"] is None or not t["stopped_by"]:
                return fail(f"{k['name']}: sampling not recorded: {t}")
        settings = results["run"].get("settings") or {}
        want = {"repetitions": 3, "timeout_s": 0.05, "max_noise": 0.005, "l2_policy": "cold",
                "filter": "^scale_f32_", "seed": 1, "ceilings_from": ""}
        wrong = {key: settings.get(key) for key, value in want.items() if settings.get(key) != value}
        if wrong:
            return fail(f"run.settings {wrong} differ from {want}")
        progress = [line for line in r.stderr.splitlines() if re.match(r"\[\d+/4\] ", line)]
        if len(progress) != 4 or not progress[-1].startswith("[4/4] "):
            return fail(f"expected progress lines [1/4]..[4/4] on stderr, got {progress}")
        # Strict UTF-8: Google Benchmark writes argv[0] as "executable"; a
        # dangling argv once put garbage bytes there.
        with open(os.path.join(out, "benchmarks.json"), "rb") as f:
            try:
                gb = json.loads(f.read().decode("utf-8", errors="strict"))
            except UnicodeDecodeError as error:
                return fail(f"benchmarks.json is not valid UTF-8: {error}")
        # The harness hands Google Benchmark the program's name as argv[0].
        if gb.get("context", {}).get("executable") != program(binary):
            return fail(f"benchmarks.json executable {gb.get('context', {}).get('executable')!r}"
                        f" is not {program(binary)!r}")
        if "context" not in gb or "benchmarks" not in gb:
            return fail("benchmarks.json lacks context or benchmarks")
        runs = gb["benchmarks"]
        iterations = [b for b in runs if b.get("run_type") == "iteration"]
        aggregates = [b for b in runs if b.get("run_type") == "aggregate"]
        if len(iterations) != 12:
            return fail(f"{len(iterations)} iteration runs in benchmarks.json, expected 4 x 3")
        if not any(b.get("aggregate_name") == "median" for b in aggregates):
            return fail("benchmarks.json has no median aggregates")
        for b in runs:
            needed = GB_COMMON_FIELDS + (GB_ITERATION_FIELDS if b.get("run_type") == "iteration"
                                         else GB_AGGREGATE_FIELDS)
            missing = [field for field in needed if field not in b]
            if missing:
                return fail(f"benchmarks.json entry {b.get('name')} lacks {missing}")
        import xml.etree.ElementTree as ElementTree
        svg = ElementTree.parse(os.path.join(out, "roofline.svg")).getroot()
        if not svg.tag.endswith("svg"):
            return fail(f"roofline.svg root is {svg.tag}")
        with open(os.path.join(out, "report.html"), encoding="utf-8") as f:
            html = f.read()
        if "<svg" not in html or "scale_f32_vec4" not in html:
            return fail("report.html lacks the chart or the kernel table")
        print(f"{len(results['kernels'])} kernels validated and timed; "
              f"{len(runs)} Google Benchmark entries")
        return 0


def check_emu_crash_keeps_partial_results(binary, schema_path):
    with tempfile.TemporaryDirectory() as out:
        r = run(binary, *EMU_RUN_ARGS, "--out", out, env={"RL_BENCH_TEST_ABORT_AFTER": "1"})
        if r.returncode != 70:
            return fail(f"exit {r.returncode}, expected the simulated crash (70); {r.stderr!r}")
        results, why = load_schema_valid_results(out, schema_path)
        if why:
            return fail("partial " + why)
        if len(results["kernels"]) != 1 or results["kernels"][0]["status"] != "ok":
            return fail(f"expected the one finished kernel, got {results['kernels']}")
        leftovers = [f for f in os.listdir(out) if f not in ("results.json", "benchmarks.json")]
        if leftovers:
            return fail(f"temporary files left behind: {leftovers}")
        print("partial results.json holds the finished kernel")
        return 0


def check_emu_interrupt_keeps_finished_results(binary, schema_path):
    """SIGINT mid-run: one line, exit 130, both JSON files valid and marked
    incomplete, the report rendered from what finished."""
    import signal
    import time
    with tempfile.TemporaryDirectory() as out:
        args = ["--size", "small", "--benchmark_filter=^scale_f32_|^gelu_",
                "--benchmark_repetitions=2", "--timeout=0.05", "--out", out]
        proc = subprocess.Popen([binary, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        seen = []
        deadline = time.monotonic() + 240
        for line in proc.stderr:  # line-buffered progress: interrupt after the first result
            seen.append(line)
            if line.startswith("[1/") or time.monotonic() > deadline:
                break
        proc.send_signal(signal.SIGINT)
        stdout, rest = proc.communicate(timeout=240)
        stderr = "".join(seen) + rest
        if proc.returncode != 130:
            return fail(f"exit {proc.returncode}, expected 130; stderr {stderr!r}")
        said = [line for line in stderr.splitlines() if "interrupted by SIGINT" in line]
        if len(said) != 1 or not said[0].startswith(program(binary) + ": "):
            return fail(f"expected one 'interrupted by SIGINT' line, got {said}")
        results, why = load_schema_valid_results(out, schema_path)
        if why:
            return fail("interrupted " + why)
        run_state = results.get("run", {})
        if run_state.get("complete") is not False or run_state.get("interrupted_by") != "SIGINT":
            return fail(f"results.json run {run_state} is not marked interrupted")
        kernels = results["kernels"]
        if not kernels or any(k["status"] != "ok" for k in kernels):
            return fail(f"expected only finished, validated kernels, got {kernels}")
        total = len([k for k in stderr.splitlines() if re.match(r"\[\d+/\d+\] ", k)])
        if len(kernels) != total:
            return fail(f"{len(kernels)} kernels recorded, {total} reported finished")
        with open(os.path.join(out, "benchmarks.json"), encoding="utf-8") as f:
            gb = json.load(f)
        if gb["context"].get("bench_roofline_complete") is not False:
            return fail("benchmarks.json is not marked incomplete")
        if any(b.get("error_message") == "interrupted" for b in gb["benchmarks"]):
            return fail("benchmarks.json keeps the benchmarks that never ran")
        with open(os.path.join(out, "report.html"), encoding="utf-8") as f:
            if "Incomplete run (interrupted by SIGINT)" not in f.read():
                return fail("report.html does not say the run is incomplete")
        if "interrupted" in stdout:
            return fail("the console lists the skipped benchmarks as errors")
        print(f"{len(kernels)} finished benchmark(s) kept; both files valid and marked")
        return 0


def check_selection_bad_input(binary):
    """--family, --shape and the ceilings flags: each bad value is one line and exit 2."""
    cases = [
        (["--family", "nosuch"], "unknown family 'nosuch'"),
        (["--family", "demo,"], "--family expects NAME"),
        (["--shape", "demo"], "expected FAMILY:dim=value"),
        (["--shape", "nosuch:n=5"], "unknown family 'nosuch'"),
        (["--shape", "gemm:M=64,N=64"], "missing K"),
        (["--shape", "gemm:M=64,N=64,K=64,Q=2"], "unknown dimension 'Q'"),
        (["--shape", "gemm:M=0,N=64,K=64"], "M must be positive"),
        (["--shape", "demo:n=-3"], "non-negative integer"),
        (["--shape", "demo:n=5,n=6"], "n is given twice"),
        (["--ceilings-only", "--no-ceilings"], "exclude each other"),
        (["--dump-tensors="], "--dump-tensors expects a directory"),
        (["--max-noise", "0"], "--max-noise expects a number from 0.01 to 100"),
        (["--max-noise", "half"], "--max-noise expects a number"),
        (["--timeout", "-1"], "--timeout expects a number"),
        (["--min-samples", "0"], "--min-samples expects a number from 1"),
        (["--benchmark_repetitions=0"], "--benchmark_repetitions expects a number from 1"),
        (["--benchmark_min_time=0.5"], "each kernel samples until --max-noise or --timeout"),
        (["--benchmark_min_warmup_time=1"], "--benchmark_min_warmup_time does not apply"),
        (["--ceilings-from", "/nonexistent/results.json"], "--ceilings-from: "),
        (["--ceilings-from", "x.json", "--no-ceilings"], "--ceilings-from excludes --no-ceilings"),
    ]
    for args, must_contain in cases:
        why = expect_one_line_error(binary, args, must_contain)
        if why:
            return why
    # The host-side validation's thread count is input too (rl/host_parallel.hpp).
    for value in ("0", "many"):
        why = expect_one_line_error(binary, [], "RL_HOST_THREADS must be a whole number",
                                    env={"RL_HOST_THREADS": value})
        if why:
            return why
    return 0


def read_npy_float32(path):
    """A .npy file as (shape, values): the version 1.0 '<f4' C-order subset we write."""
    import ast
    import struct
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x93NUMPY\x01\x00":
        raise ValueError(f"{path}: not a .npy 1.0 file")
    header_len = struct.unpack("<H", data[8:10])[0]
    if (10 + header_len) % 64 != 0:
        raise ValueError(f"{path}: data does not start on a 64-byte boundary")
    header = ast.literal_eval(data[10:10 + header_len].decode("latin1"))
    if header["descr"] != "<f4" or header["fortran_order"]:
        raise ValueError(f"{path}: header {header}")
    payload = data[10 + header_len:]
    count = 1
    for d in header["shape"]:
        count *= d
    if len(payload) != 4 * count:
        raise ValueError(f"{path}: {len(payload)} bytes for shape {header['shape']}")
    return header["shape"], struct.unpack(f"<{count}f", payload)


def check_emu_family_shape_and_dump(binary, schema_path):
    """--family demo --shape demo:n=777 --no-ceilings --dump-tensors: exactly that work,
    no roofs, and every tensor on disk as the kernel read and wrote it."""
    with tempfile.TemporaryDirectory() as tmp:
        out, dump = os.path.join(tmp, "run"), os.path.join(tmp, "dump")
        r = run(binary, "--family", "demo", "--shape", "demo:n=777", "--no-ceilings",
                "--dump-tensors", dump, "--benchmark_repetitions=1",
                "--timeout=0.05", "--out", out)
        if r.returncode != 0:
            return fail(f"exit {r.returncode}; stderr {r.stderr!r}")
        results, why = load_schema_valid_results(out, schema_path)
        if why:
            return fail(why)
        got = sorted((k["name"], k["shape"]) for k in results["kernels"])
        want = [("scale_f32_scalar", {"n": 777}), ("scale_f32_vec4", {"n": 777})]
        if got != want:
            return fail(f"kernels {got}, expected {want}")
        if results["ceilings"] or any(k["roof"] is not None for k in results["kernels"]):
            return fail("--no-ceilings measured a roof")
        for name, _ in want:
            folder = os.path.join(dump, name, "n=777")
            with open(os.path.join(folder, "manifest.json")) as f:
                manifest = json.load(f)
            files = {t["name"]: t for t in manifest["tensors"]}
            if sorted(files) != ["a", "x", "y"] or files["y"]["role"] != "output":
                return fail(f"{folder}: manifest {manifest}")
            tensors = {}
            for t in manifest["tensors"]:
                shape, values = read_npy_float32(os.path.join(folder, t["file"]))
                if list(shape) != t["dims"]:
                    return fail(f"{t['file']}: shape {shape}, manifest says {t['dims']}")
                tensors[t["name"]] = values
            a = tensors["a"][0]
            bad = [i for i, (x, y) in enumerate(zip(tensors["x"], tensors["y"]))
                   if abs(y - a * x) > 1e-6 * max(1.0, abs(a * x))]
            if len(tensors["x"]) != 777 or bad:
                return fail(f"{name}: y != a*x at {bad[:5]}")
        print("2 kernels at n=777, no ceilings; x, a, y dumped and y = a*x")
        return 0


def check_emu_warm_l2_and_sampling_flags(binary, schema_path):
    """--warm-l2 judges by batch samples; --max-noise, --timeout and --min-samples reach
    run.settings and the sampling (a 100% noise target stops each repetition at
    --min-samples)."""
    with tempfile.TemporaryDirectory() as out:
        r = run(binary, "--size", "small", "--benchmark_filter=^scale_f32_vec4/n=1000",
                "--benchmark_repetitions=2", "--warm-l2", "--max-noise", "100",
                "--min-samples", "4", "--timeout", "60", "--no-ceilings", "--out", out)
        if r.returncode != 0:
            return fail(f"exit {r.returncode}; stderr {r.stderr!r}")
        results, why = load_schema_valid_results(out, schema_path)
        if why:
            return fail(why)
        settings = results["run"]["settings"]
        want = {"l2_policy": "warm", "max_noise": 1.0, "min_samples": 4, "timeout_s": 60,
                "repetitions": 2, "no_ceilings": True}
        wrong = {key: settings.get(key) for key, value in want.items() if settings.get(key) != value}
        if wrong:
            return fail(f"run.settings {wrong} differ from {want}")
        if results["context"]["l2_flushed"] is not False:
            return fail("context.l2_flushed is not false with --warm-l2")
        (k,) = results["kernels"]
        t, other = k["time_s"], k["other_time_s"]
        if t["kind"] != "batch" or other["kind"] != "cold" or k["l2_flushed"] is not False:
            return fail(f"--warm-l2: time_s kind {t['kind']}, other {other['kind']}")
        for kind in (t, other):
            if kind["stopped_by"] != "noise" or kind["samples_taken"] != 2 * 4:
                return fail(f"expected 2 repetitions x 4 samples stopped by noise, got {kind}")
        print("--warm-l2 judged by batch samples; sampling flags recorded and applied")
        return 0


def check_emu_ceilings_from(binary, schema_path):
    """--ceilings-from reuses an earlier run's roofs on the same device, and refuses
    a file from another device with one line and exit 2."""
    with tempfile.TemporaryDirectory() as roofs, tempfile.TemporaryDirectory() as out:
        r = run(binary, "--size", "small", "--ceilings-only", "--benchmark_repetitions=1",
                "--benchmark_filter=hbm_copy", "--timeout=0.05", "--out", roofs)
        if r.returncode != 0:
            return fail(f"--ceilings-only run: exit {r.returncode}; stderr {r.stderr!r}")
        earlier = os.path.join(roofs, "results.json")
        with open(earlier, encoding="utf-8") as f:
            first = json.load(f)
        if not first["ceilings"]:
            return fail("the --ceilings-only run measured no ceiling")
        r = run(binary, *EMU_RUN_ARGS, "--ceilings-from", earlier, "--out", out)
        if r.returncode != 0:
            return fail(f"--ceilings-from run: exit {r.returncode}; stderr {r.stderr!r}")
        results, why = load_schema_valid_results(out, schema_path)
        if why:
            return fail(why)
        if [c["name"] for c in results["ceilings"]] != [c["name"] for c in first["ceilings"]]:
            return fail(f"ceilings {results['ceilings']} are not the earlier run's")
        if any(c["value"] != e["value"] for c, e in zip(results["ceilings"], first["ceilings"])):
            return fail("a reused ceiling's value changed")
        if any(k.get("ceiling") for k in results["kernels"]):
            return fail("a ceiling kernel ran although the roofs were given")
        if results["run"]["settings"]["ceilings_from"] != earlier:
            return fail(f"run.settings.ceilings_from is {results['run']['settings']}")
        if not all(k.get("pct_of_roof") is not None for k in results["kernels"]):
            return fail("kernels were not judged against the reused roofs")
        first["context"]["device"]["name"] = "Another GPU"
        first["context"]["device"]["uuid"] = ""
        other = os.path.join(roofs, "other.json")
        with open(other, "w", encoding="utf-8") as f:
            json.dump(first, f)
        why = expect_one_line_error(binary, [*EMU_RUN_ARGS, "--ceilings-from", other, "--out", out],
                                    "roofs do not carry across devices")
        if why:
            return why
        print("roofs reused on the same device; another device's refused")
        return 0


def check_emu_json_format_keeps_stdout_pure(binary):
    """--benchmark_format=json: stdout is Google Benchmark's JSON document alone."""
    with tempfile.TemporaryDirectory() as out:
        r = run(binary, "--benchmark_filter=^scale_f32_vec4/n=1000", "--no-ceilings",
                "--benchmark_repetitions=1", "--timeout=0.05",
                "--benchmark_format=json", "--out", out)
        if r.returncode != 0:
            return fail(f"exit {r.returncode}; stderr {r.stderr!r}")
        try:
            doc = json.loads(r.stdout)
        except json.JSONDecodeError as error:
            return fail(f"stdout is not one JSON document ({error}): {r.stdout[:400]!r}")
        if "benchmarks" not in doc:
            return fail(f"stdout JSON lacks benchmarks: {list(doc)}")
        if "wrote results.json" not in r.stderr:
            return fail("the run summary did not go to stderr")
        print("stdout is pure JSON; the summary went to stderr")
        return 0


def check_emu_second_pass_runs_sm90a_as_hopper(binary, schema_path):
    """scripts/emulator-run (scripts/run without a GPU): pass 1 at compute capability 8.9
    skips the sm_90a GEMM rungs, pass 2 runs them with the emulator as a Hopper into
    OUT/hopper-sm90a/; with --benchmark_filter there is no pass 2."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                          "emulator-run")
    env = {k: v for k, v in os.environ.items() if k != "RL_EMU_CC"}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        flags = ["--no-ceilings", "--family", "gemm", "--shape", "gemm:M=24,N=16,K=16",
                 "--benchmark_repetitions=1", "--timeout=0.05", "--out", out]
        r = subprocess.run([script, binary, *flags], capture_output=True, text=True,
                           timeout=600, env=env)
        if r.returncode != 0:
            return fail(f"exit {r.returncode}; stderr {r.stderr[-2000:]!r}")
        passes = {}
        for folder, cc in ((out, "8.9"), (os.path.join(out, "hopper-sm90a"), "9.0")):
            results, why = load_schema_valid_results(folder, schema_path)
            if why:
                return fail(why)
            if results["context"]["device"]["compute_capability"] != cc:
                return fail(f"{folder}: device {results['context']['device']}, expected cc {cc}")
            passes[cc] = {k["name"]: k["status"] for k in results["kernels"]}
            if cc == "8.9":
                reasons = {k["name"]: k.get("error") or "" for k in results["kernels"]}
        # Every sm_90a rung of the ladder (gemm_wgmma_*), the first two at least.
        rungs = sorted(n for n in passes["8.9"] if n.startswith("gemm_wgmma_"))
        if not {"gemm_wgmma_tma_bf16", "gemm_wgmma_tma_fp16"} <= set(rungs):
            return fail(f"pass 1 lists no gemm_wgmma_tma rungs: {sorted(passes['8.9'])}")
        if [passes["8.9"].get(n) for n in rungs] != ["skipped"] * len(rungs):
            return fail(f"pass 1: {passes['8.9']}")
        # The skip says how to run it here, not that the emulator cannot.
        for n in rungs:
            if "needs compute capability 9.0" not in reasons[n] or "RL_EMU_CC=90" not in reasons[n]:
                return fail(f"pass 1 skip reason of {n}: {reasons[n]!r}")
        if passes["9.0"] != {n: "ok" for n in rungs}:
            return fail(f"pass 2 ran {passes['9.0']}, expected exactly {rungs} validated")
        if sum(status == "ok" for status in passes["8.9"].values()) < 10:
            return fail(f"pass 1 validated too little: {passes['8.9']}")
        # The user's own filter: one pass, as asked.
        out2 = os.path.join(tmp, "filtered")
        filtered = [*flags[:-1], out2, "--benchmark_filter=gemm_f32_naive"]
        r = subprocess.run([script, binary, *filtered], capture_output=True, text=True,
                           timeout=600, env=env)
        second = os.path.exists(os.path.join(out2, "hopper-sm90a"))
        if r.returncode != 0 or second:
            return fail(f"with a filter: exit {r.returncode}, hopper-sm90a/ written: {second}")
        print(f"pass 1 (cc 8.9): {len(passes['8.9'])} kernels, sm_90a rungs skipped; "
              f"pass 2 (cc 9.0): {rungs} ok; a user filter gives one pass")
        return 0


def check_list_names_each_records_source_file(binary, source_root):
    """--list ends every line with the file that registered the record, a path
    that exists in the source tree (a newcomer finds the kernel from the list)."""
    r = run(binary, "--list", "--size", "small")
    if r.returncode != 0:
        return fail(f"--list exited {r.returncode}: {r.stderr.strip()}")
    lines = r.stdout.splitlines()
    if not lines or lines[0].split()[-1] != "source":
        return fail(f"--list's header does not end with 'source': {lines[:1]}")
    for line in lines[1:]:
        source = line.split()[-1]
        if not os.path.isfile(os.path.join(source_root, source)):
            return fail(f"--list names a source that does not exist: {line}")
    if len(lines) < 10:
        return fail(f"--list listed only {len(lines) - 1} instances")
    return 0


CHECKS = {
    "list_names_each_records_source_file": check_list_names_each_records_source_file,
    "emu_second_pass_runs_sm90a_as_hopper": check_emu_second_pass_runs_sm90a_as_hopper,
    "emu_warm_l2_and_sampling_flags": check_emu_warm_l2_and_sampling_flags,
    "emu_ceilings_from": check_emu_ceilings_from,
    "emu_json_format_keeps_stdout_pure": check_emu_json_format_keeps_stdout_pure,
    "selection_bad_input": check_selection_bad_input,
    "emu_family_shape_and_dump": check_emu_family_shape_and_dump,
    "version": check_version,
    "filter_selecting_nothing": check_filter_selecting_nothing,
    "emu_interrupt_keeps_finished_results": check_emu_interrupt_keeps_finished_results,
    "help": check_help,
    "bad_flag": check_bad_flag,
    "bad_benchmark_flag": check_bad_benchmark_flag,
    "bad_size": check_bad_size,
    "unwritable_out": check_unwritable_out,
    "no_gpu_message": check_no_gpu_message,
    "emu_run": check_emu_run,
    "emu_crash_keeps_partial_results": check_emu_crash_keeps_partial_results,
}


def main():
    check, binary, *rest = sys.argv[1:]
    return CHECKS[check](binary, *rest)


if __name__ == "__main__":
    sys.exit(main())
