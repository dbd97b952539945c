"""End-to-end scenarios of the `roofline` CLI (through roofline_cli_for_tests).

usage: cli_e2e.py SCENARIO CLI FIXTURE_WRITER WORKDIR
Each scenario exits 0 when the behaviour holds, 1 (with the reason) when not.
"""
import json
import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

from rltest import check, load, one_line_error, run_scenario

SVG = "{http://www.w3.org/2000/svg}"


class Env:
    def __init__(self, cli, writer, work):
        self.cli, self.writer, self.work = cli, writer, work

    def path(self, name):
        return os.path.join(self.work, name)

    def fixture(self, kind, name=None):
        out = self.path(name or f"{kind}.json")
        subprocess.run([self.writer, kind, out], check=True)
        return out

    def run(self, *args):
        p = subprocess.run([self.cli, *args], capture_output=True, text=True, timeout=30)
        check(p.returncode >= 0, f"roofline {args} died with signal {-p.returncode}")
        return p


def parse_svg(path):
    text = open(path, encoding="utf-8").read()
    check(not re.search(r"\b(nan|inf|infinity)\b", text, re.IGNORECASE),
          "NaN/Inf in the SVG")
    root = ET.fromstring(text.encode("utf-8"))
    check(root.tag == SVG + "svg" and root.get("version") == "1.1", "not an SVG 1.1 root")
    for el in root.iter():
        for attr in ("x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "width", "height"):
            v = el.get(attr)
            if v is not None:
                check(math.isfinite(float(v)), f"{el.tag} {attr}={v}")
        check(not (el.get("href") or el.get("{http://www.w3.org/1999/xlink}href") or "").startswith("http"),
              "external asset referenced")
    return root, text


def by_class(root, cls):
    return [el for el in root.iter() if cls in (el.get("class") or "").split()]


def text_boxes(root):
    boxes = []
    for el in by_class(root, "point-label") + by_class(root, "ceiling-label"):
        x, y, t = float(el.get("x")), float(el.get("y")), el.text or ""
        boxes.append((t, x, y - 11, x + 0.62 * 11 * len(t), y + 3))
    return boxes


# ---------------------------------------------------------------- scenarios --

def skus_lists_every_row_with_sources(env):
    p = env.run("skus")
    check(p.returncode == 0, p.stderr)
    for key in ["a100-sxm4-40gb", "a10g", "t4", "l40s", "rtx-5090", "h100-nvl", "h200-sxm", "b200"]:
        check(re.search(rf"^{re.escape(key)}\s", p.stdout, re.M), f"row {key} missing")
        check(re.search(rf"^  {re.escape(key)}: .*(datasheet|whitepaper|specifications|documentation)",
                        p.stdout, re.M | re.I), f"source of {key} missing")
    check("sparse" in p.stdout, "the table does not say its figures are dense")


def model_h100_json_ridge_is_295(env):
    p = env.run("model", "--sku", "h100-sxm", "--json")
    check(p.returncode == 0, p.stderr)
    m = json.loads(p.stdout)
    ridge = {r["compute"]: r["flop_per_byte"] for r in m["ridge_points"]}
    check(abs(ridge["tc.bf16"] - 989.4e12 / 3.35e12) < 0.01, f"tc.bf16 ridge {ridge['tc.bf16']}")
    check(abs(ridge["fp32.fma"] - 66.9e12 / 3.35e12) < 0.01, f"fp32 ridge {ridge['fp32.fma']}")
    kernels = {k["name"]: k for k in m["kernels"]}
    check(kernels["gemm_bf16_tc"]["bound"] == "compute", "8192^3 GEMM should be compute-bound")
    check(kernels["gelu_tanh_f32_naive"]["bound"] == "memory", "GELU should be memory-bound")
    check(abs(kernels["gelu_tanh_f32_fused"]["intensity"] - 1.0) < 1e-12, "fused GELU intensity")
    check(abs(kernels["gelu_tanh_f32_naive"]["intensity"] - 1 / 3) < 1e-12, "naive GELU intensity")
    text = env.run("model", "--sku", "h100-sxm")
    check(text.returncode == 0 and "295.3 FLOP/B" in text.stdout, text.stdout)


def model_prints_shapes_precision_and_unit_apart_and_sizes_loops_to_the_sku(env):
    m = json.loads(env.run("model", "--sku", "a100-sxm4-80gb", "--json").stdout)
    kernels = {k["name"]: k for k in m["kernels"]}
    bf16 = kernels["mma_sync_loop_bf16"]
    check(bf16["precision"] == "bf16" and bf16["unit"] == "tc_bf16", f"precision/unit {bf16}")
    # Listed as 2 blocks on a 1-SM device: one wave of the A100's 108 SMs is 216.
    check(bf16["shape"]["blocks"] == 216, f"loop not re-sized to the SKU: {bf16['shape']}")
    check(bf16["flops"] == 256 * 216 * 128 * 1000, f"cost not recomputed: {bf16['flops']}")
    check(bf16["bound"] == "compute" and bf16["predicted_time_s"] > 1e-6,
          f"bf16 loop prediction {bf16}")
    fp8 = kernels["mma_sync_loop_fp8_e4m3"]
    check(fp8["bound"] == "not_supported" and "predicted_time_s" not in fp8,
          f"an FP8 loop on A100 must not get a time: {fp8}")
    text = env.run("model", "--sku", "a100-sxm4-80gb").stdout
    row = next((line for line in text.splitlines() if "mma_sync_loop_fp8_e4m3" in line), "")
    check("needs compute capability 8.9" in row, f"fp8 row says why not: {row!r}")
    gemm = next((line for line in text.splitlines() if "gemm_bf16_tc" in line), "")
    check("M=8192,N=8192,K=8192" in gemm and " bf16 " in gemm and " tc_bf16 " in gemm,
          f"gemm row lacks shape, precision or unit: {gemm!r}")
    # A SKU of the right generation without the datasheet figure says so.
    h100 = {k["name"]: k for k in
            json.loads(env.run("model", "--sku", "h100-sxm", "--json").stdout)["kernels"]}
    check(h100["mma_sync_loop_fp8_e4m3"].get("predicted_time_s", 0) > 0,
          "H100 has FP8: the loop gets a prediction")
    # sm_90a-only code is modelled on Hopper and refused, with the reason, elsewhere.
    check(h100["wgmma_loop_bf16"].get("predicted_time_s", 0) > 0, "wgmma on H100 gets a time")
    b200 = {k["name"]: k for k in
            json.loads(env.run("model", "--sku", "b200", "--json").stdout)["kernels"]}
    check(b200["wgmma_loop_bf16"]["bound"] == "not_supported"
          and "built for compute capability up to 9.0" in b200["wgmma_loop_bf16"]["note"],
          f"wgmma on B200 must be refused: {b200['wgmma_loop_bf16']}")


def version_names_program_and_version(env):
    p = env.run("--version")
    check(p.returncode == 0 and p.stdout.startswith("roofline (test driver) 0.0.0"),
          f"--version: exit {p.returncode}, {p.stdout!r} {p.stderr!r}")


def model_unknown_sku_is_one_line_exit_2(env):
    one_line_error(env.run("model", "--sku", "h100"), "unknown SKU 'h100'")


def plot_writes_valid_svg(env):
    res = env.fixture("emulator")
    out = env.path("chart.svg")
    p = env.run("plot", res, "-o", out)
    check(p.returncode == 0, p.stderr)
    root, text = parse_svg(out)
    check(len(by_class(root, "memory-ceiling")) == 2, "memory ceilings")
    check(len(by_class(root, "compute-ceiling")) == 2, "compute ceilings")
    check(len(by_class(root, "kernel-point")) == 3, "kernel points")
    # Rung arrows are the family views' (family:gelu has the one of this fixture).
    check(len(by_class(root, "fusion-arrow")) == 0, "no rung arrows in the overview")
    check(len(by_class(root, "ridge")) >= 2, "ridge points")
    # The overview labels the fastest kernel of each family; the rest have hover titles.
    labels = {el.text for el in by_class(root, "point-label")}
    check(labels == {"gelu_tanh_f32_fused_vec4", "gemm_bf16_wmma"}, f"point labels {labels}")
    ceiling_labels = " ".join(el.text for el in by_class(root, "ceiling-label"))
    for c in ["hbm.copy", "l2.read", "fp32.fma", "tc.bf16"]:
        check(c in ceiling_labels, f"ceiling label {c} missing: {ceiling_labels}")
    check("CPU emulator — not GPU performance" in text, "emulator banner missing")
    check(len(by_class(root, "x-tick")) >= 3 and len(by_class(root, "y-tick")) >= 3, "decade ticks")
    check(by_class(root, "legend"), "legend missing")


def report_writes_self_contained_html(env):
    res = env.fixture("emulator")
    out = env.path("report.html")
    p = env.run("report", res, "-o", out)
    check(p.returncode == 0, p.stderr)
    html = open(out, encoding="utf-8").read()
    check(html.startswith("<!DOCTYPE html>"), "not HTML5")
    for needle in ["<svg", "CPU emulator — not GPU performance", "<h2>Ceilings</h2>",
                   "<h2>Kernels</h2>", "<h2>Fusion</h2>", "<h2>Context</h2>", "unknown device",
                   "gelu_tanh_f32_fused_vec4", "not finite"]:
        check(needle in html, f"report lacks {needle!r}")
    check(not re.search(r"(src|href)\s*=\s*\"https?:", html), "external reference in the report")
    check("<script" not in html, "scripts in the report")
    forced = env.run("report", res, "-o", env.path("report-sku.html"), "--sku", "a100-sxm4-80gb")
    check(forced.returncode == 0, forced.stderr)
    check("NVIDIA A100 SXM4 80GB (chosen with --sku)" in open(env.path("report-sku.html")).read(),
          "--sku row not shown")


VERDICT = r"\*\*(SAME|SLOW|FAST|UNSURE|INCONCLUSIVE)\*\*"


def compare_case(env, new_kind, expected_exit, expected_verdict, *flags):
    base = env.fixture("compare-base")
    new = env.fixture(new_kind)
    p = env.run("compare", base, new, *flags)
    check(p.returncode == expected_exit, f"exit {p.returncode}, expected {expected_exit}\n{p.stdout}{p.stderr}")
    verdicts = re.findall(VERDICT, p.stdout)
    check(verdicts == [expected_verdict] * 3, f"verdicts {verdicts}\n{p.stdout}")
    check(re.search(rf"→ exit {expected_exit}\.$", p.stdout.strip()), f"no exit line\n{p.stdout}")
    return p


def save(env, name, results):
    path = env.path(name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
    return path


def set_samples(kernel, samples):
    """Gives a kernel these samples with a consistent median, min, max and count."""
    ordered = sorted(samples)
    n = len(ordered)
    median = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    kernel["time_s"].update(samples=samples, repetitions=n, median=median,
                            min=ordered[0], max=ordered[-1])


def compare_identical_is_same_exit_0(env):
    p = compare_case(env, "compare-same", 0, "SAME")
    check("None." in p.stdout, "identical contexts should show no difference")
    check("Geometric-mean ratio over 3 kernel(s): 1.0000 (+0.00%)" in p.stdout, p.stdout)


def compare_ten_percent_slower_is_slow_exit_1(env):
    p = compare_case(env, "compare-slow", 1, "SLOW")
    check("Geometric-mean ratio over 3 kernel(s): 1.1000 (+10.00%)" in p.stdout, p.stdout)


def compare_identical_times_with_a_higher_clock_are_same_exit_0(env):
    p = compare_case(env, "compare-clock-up", 0, "SAME")
    check(re.search(r"\| SM clock \| 1000 MHz \| 1100 MHz \|", p.stdout), "clock change not in the context diff")
    check(p.stdout.count("| 1.100 |") == 3, f"clock-normalised ratio not shown\n{p.stdout}")
    check("the verdict rests on the times" in p.stdout, p.stdout)


def compare_slowdown_with_a_clock_drop_is_slow_exit_1(env):
    p = compare_case(env, "compare-clock-drop", 1, "SLOW")
    check(p.stdout.count("the clock explains it") == 3, p.stdout)


def compare_json_format(env):
    base, new = env.fixture("compare-base"), env.fixture("compare-slow")
    p = env.run("compare", base, new, "--format", "json", "--threshold", "20")
    check(p.returncode == 0, f"10% is within a 20% threshold; exit {p.returncode}")
    j = json.loads(p.stdout)
    check([k["verdict"] for k in j["kernels"]] == ["SAME"] * 3, j["kernels"])
    check(j["threshold_pct"] == 20 and j["exit_code"] == 0, j)
    check(abs(j["geometric_mean_ratio"] - 1.1) < 1e-9 and j["kernels"][0]["p_exact"], j)


def compare_three_repetitions_is_inconclusive_exit_3(env):
    base, slow = load(env.fixture("compare-base")), load(env.fixture("compare-slow"))
    for results in (base, slow):
        for k in results["kernels"]:
            set_samples(k, k["time_s"]["samples"][:3])
    for new in (save(env, "base3.json", base), save(env, "slow3.json", slow)):
        p = env.run("compare", save(env, "base3.json", base), new)
        check(p.returncode == 3, f"exit {p.returncode}, expected 3\n{p.stdout}{p.stderr}")
        check(re.findall(VERDICT, p.stdout) == ["INCONCLUSIVE"] * 3, p.stdout)
        check("smallest possible p is 0.1" in p.stdout and "at least 4 per side" in p.stdout, p.stdout)


def compare_noise_beyond_the_threshold_is_unsure_exit_3(env):
    # 0.3% noise cannot show equality within 0.1%.
    compare_case(env, "compare-same", 3, "UNSURE", "--threshold", "0.1")


def compare_failed_or_missing_kernel_fails_exit_1(env):
    base = env.fixture("compare-base")
    failed = load(env.fixture("compare-same"))
    failed["kernels"][0].update(status="failed_validation", validated=False, time_s=None,
                                error="element 3: got NaN")
    p = env.run("compare", base, save(env, "failed.json", failed), "--allow-missing", ".*")
    check(p.returncode == 1, f"failed validation must fail the gate, even with --allow-missing\n{p.stdout}")
    check("copy_vec4 [n=1048576]: failed validation in" in p.stdout, p.stdout)

    errored = load(env.fixture("compare-same"))
    errored["kernels"][1].update(status="error", time_s=None, error="launch failed")
    p = env.run("compare", base, save(env, "errored.json", errored))
    check(p.returncode == 1 and "errored in" in p.stdout, f"exit {p.returncode}\n{p.stdout}")

    missing = load(env.fixture("compare-same"))
    del missing["kernels"][2]
    path = save(env, "missing.json", missing)
    p = env.run("compare", base, path)
    check(p.returncode == 1 and "layernorm_twopass [n=1048576]: missing from" in p.stdout,
          f"exit {p.returncode}\n{p.stdout}")
    p = env.run("compare", base, path, "--allow-missing", "^layernorm_", "--allow-missing", "nothing")
    check(p.returncode == 0 and "Allowed by --allow-missing" in p.stdout, f"exit {p.returncode}\n{p.stdout}")
    one_line_error(env.run("compare", base, path, "--allow-missing", "("), "--allow-missing")


def compare_duplicate_entry_is_one_line_exit_2(env):
    new = load(env.fixture("compare-same"))
    new["kernels"].append(new["kernels"][1])
    path = save(env, "duplicate.json", new)
    one_line_error(env.run("compare", env.fixture("compare-base"), path),
                   re.escape(path), r"gelu_fused \[n=1048576\] appears twice")


def compare_inconsistent_samples_are_one_line_exit_2(env):
    for name, edit, fragment in [
            ("median", lambda t: t.update(median=t["median"] * 1.05), "states median"),
            ("count", lambda t: t.update(repetitions=19), "states 19 repetitions but holds 20 samples"),
            ("negative", lambda t: t["samples"].__setitem__(0, -1.0), "times must be positive")]:
        new = load(env.fixture("compare-same"))
        edit(new["kernels"][0]["time_s"])
        path = save(env, f"inconsistent_{name}.json", new)
        one_line_error(env.run("compare", env.fixture("compare-base"), path), re.escape(path), fragment)


def compare_another_device_needs_cross_device(env):
    base = env.fixture("compare-base")
    for field, edit in [("device", lambda c: c["device"].update(name="NVIDIA H100 80GB HBM3")),
                        ("backend", lambda c: c.update(backend="cuda")),
                        ("size preset", lambda c: c.update(size_preset="large"))]:
        new = load(env.fixture("compare-same"))
        edit(new["context"])
        path = save(env, "other.json", new)
        one_line_error(env.run("compare", base, path), field, "--cross-device")
        p = env.run("compare", base, path, "--cross-device")
        check(p.returncode == 0 and "Cross-device comparison" in p.stdout,
              f"{field}: exit {p.returncode}\n{p.stdout}{p.stderr}")


def compare_help_states_verdicts_exit_codes_and_flags(env):
    p = env.run("compare", "--help")
    check(p.returncode == 0, p.stderr)
    text = " ".join(p.stdout.split())
    for needle in ["Exit status: 0", "1 a kernel SLOW", "2 bad input", "3 cannot decide",
                   "INCONCLUSIVE", "--allow-missing", "--cross-device", "--threshold", "--alpha"]:
        check(needle in text, f"compare --help lacks {needle!r}\n{p.stdout}")


HOSTILE = {
    "truncated": lambda good: good[: len(good) // 3],
    "wrong_type": lambda good: good.replace('"repetitions": 20', '"repetitions": "twenty"', 1),
    "huge_number": lambda good: good.replace('"sm_mhz": 1000.0', '"sm_mhz": 1e999', 1),
    "huge_integer": lambda good: good.replace('"sm_count": 4', '"sm_count": 123456789012345678901234567890', 1),
    "nan": lambda good: good.replace('"sm_mhz": 1000.0', '"sm_mhz": NaN', 1),
    "deep_nesting": lambda good: "[" * 200000,
    "empty": lambda good: "",
    "binary": lambda good: "\x00\x01\xff{",
    "not_object": lambda good: "[1,2,3]",
}


def hostile_json_is_one_line_error_exit_2(env):
    good = open(env.fixture("compare-base"), encoding="utf-8").read()
    check('"repetitions": 20' in good and '"sm_mhz": 1000.0' in good and '"sm_count": 4' in good,
          "fixture text changed; hostile edits would not apply")
    for name, make in HOSTILE.items():
        path = env.path(f"hostile_{name}.json")
        with open(path, "w", encoding="latin-1") as f:
            f.write(make(good))
        for args in (["plot", path, "-o", env.path("x.svg")],
                     ["report", path, "-o", env.path("x.html")],
                     ["compare", path, path]):
            p = env.run(*args)
            one_line_error(p, re.escape(path), r"(line \d+, column \d+|: /[a-z_/0-9]*:)")
        check(not os.path.exists(env.path("x.svg")), f"{name}: an output was written for bad input")


def bad_usage_is_one_line_exit_2(env):
    one_line_error(env.run())
    one_line_error(env.run("frobnicate"))
    one_line_error(env.run("plot", env.fixture("emulator")))  # no -o
    one_line_error(env.run("compare", "a.json"))
    one_line_error(env.run("compare", env.path("missing.json"), env.path("missing.json")), "cannot open")
    one_line_error(env.run("compare", env.fixture("emulator"), env.fixture("emulator"), "--format", "xml"))
    help_ = env.run("--help")
    check(help_.returncode == 0 and "compare" in help_.stdout, "help")


def unwritable_output_is_one_line_exit_2(env):
    res = env.fixture("emulator")
    one_line_error(env.run("plot", res, "-o", env.path("no/such/dir/chart.svg")), "cannot write")


def crowded_svg_labels_do_not_overlap(env):
    res = env.fixture("crowded")
    out = env.path("crowded.svg")
    # The memory view labels every kernel it can (the overview only one per family).
    check(env.run("plot", res, "-o", out, "--view", "memory").returncode == 0, "plot failed")
    root, _ = parse_svg(out)
    boxes = text_boxes(root)
    check(len(by_class(root, "kernel-point")) == 40, "40 points expected")
    check(len(by_class(root, "point-label")) >= 30, "too few labels placed")
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            overlap = a[1] < b[3] and b[1] < a[3] and a[2] < b[4] and b[2] < a[4]
            check(not overlap, f"labels overlap: {a[0]!r} and {b[0]!r}")


def main():
    scenario, cli, writer, work = sys.argv[1:5]
    return run_scenario(globals(), scenario, work, lambda: Env(cli, writer, work))


if __name__ == "__main__":
    sys.exit(main())
