"""`roofline counters` through the CLI (roofline_cli_for_tests): the counter
plan of every chip the SKU table names, as CI runs it (issue 28 item 4).

usage: counters_cli.py SCENARIO CLI WORKDIR
Exit 0 when the behaviour holds, 1 (with the reason) when not, 77 (skipped,
with the reason) where the build has no CUPTI and the scenario needs it.
"""
import json
import re
import subprocess
import sys

from rltest import SKIP, Skip, check, one_line_error, run_scenario

WITHOUT_CUPTI = "built without CUPTI"
# Every chip the SKU table names (roofline/src/sku_*.cpp), in table order.
SKU_CHIPS = ["GA100", "GA102", "TU104", "AD104", "AD102", "GB202", "GB20B", "GH100", "GB100",
             "GB110"]


class Env:
    def __init__(self, cli):
        self.cli = cli

    def run(self, *args):
        p = subprocess.run([self.cli, *args], capture_output=True, text=True, timeout=60)
        check(p.returncode >= 0, f"roofline {args} died with signal {-p.returncode}")
        return p

    def planned(self, *args):
        """Runs `roofline counters ARGS`; skips where the build has no CUPTI."""
        p = self.run("counters", *args)
        if p.returncode == 2 and WITHOUT_CUPTI in p.stderr:
            one_line_error(p, WITHOUT_CUPTI)
            raise Skip(f"roofline counters: {p.stderr.strip()}")
        check(p.returncode == 0, f"counters {args}: exit {p.returncode}: {p.stderr}")
        return p.stdout


def counters_all_plans_every_chip_of_the_sku_table(env):
    out = env.planned("--chip", "all")
    headings = re.findall(r"^(\w+)(?: \(([^)]*)\))?: (\d+) metrics, (\d+) passes; CUPTI schedules "
                          r"at most (\d+) hardware metrics per pass$", out, re.M)
    check([h[0] for h in headings] == SKU_CHIPS,
          f"chips planned {[h[0] for h in headings]}, expected {SKU_CHIPS}")
    for chip, skus, metrics, passes, per_pass in headings:
        check(skus, f"{chip}: no SKU named")
        check(int(metrics) > 0 and int(passes) >= 1 and int(per_pass) > 0,
              f"{chip}: {metrics} metrics, {passes} passes, {per_pass} per pass")
    check(re.search(r"^  DRAM bytes read\s+dram__bytes_op_read\.sum  \(MISSING dram__bytes_read\.sum; "
                    r"nearest equivalent\)$", out, re.M),
          "GB202's DRAM reads are not shown as the equivalent of the missing preferred metric")
    check("bench_roofline --counters collects these metrics" in out,
          "the output does not say which command collects the planned metrics")
    # A folded counter names the roles it holds, and a held role's row says
    # that its own metric is not read (CounterMetric::contains).
    bodies = re.split(r"^\w+(?: \([^)]*\))?: \d+ metrics.*$", out, flags=re.M)[1:]
    sections = dict(zip([h[0] for h in headings], bodies))
    tensor = r"sm__ops_path_tensor_src_"
    for chip, folded_row, folded, holds in [
            ("GB100", "FP8 in, FP32 accumulate", "fp4_fp6_fp8_dst_fp32",
             "tensor_fp6_fp4_f32, tensor_fp4"),
            ("GB202", "FP6/FP4 in, FP32 accumulate", "fp4_fp6_dst_fp32", "tensor_fp4")]:
        check(re.search(rf"^  tensor ops, {re.escape(folded_row)}\s+{tensor}{folded}\.sum.*  "
                        rf"\(holds {holds}: their ops are read here, once\)$",
                        sections[chip], re.M),
              f"{chip}: the folded counter {folded} does not name the roles it holds ({holds})")
        check(re.search(rf"^  tensor ops, FP4 in\s+{tensor}fp4_dst_fp32\.sum  \(not read: "
                        rf"{tensor}{folded}\.sum holds these ops\)$", sections[chip], re.M),
              f"{chip}: the FP4 row does not say that {folded} holds its ops")
    # An absent role whose ops a chosen counter holds names that counter only,
    # without the generic "folded ..., or no such tensor path here".
    check(re.search(rf"^  tensor ops, FP6/FP4 in, FP32 accumulate\s+-  \({tensor}fp4_fp6_fp8_dst_fp32"
                    rf"\.sum holds these ops\)$", sections["GB100"], re.M),
          "GB100's FP6/FP4 row does not name only the counter that holds its ops")
    check("holds" not in sections["GA100"], "GA100 folds no role into another's counter")
    check(re.search(r"^  tensor ops, FP6/FP4 in, FP32 accumulate\s+-  \(folded into another role's "
                    r"counter on this chip, or no such tensor path here\)$", sections["GA100"], re.M),
          "GA100's FP6/FP4 row, held by no counter, lost its reason")


def counters_sku_json_names_the_chip_metrics_and_passes(env):
    plan = json.loads(env.planned("--sku", "h200-sxm", "--json"))
    check(len(plan["chips"]) == 1, "one chip expected")
    chip = plan["chips"][0]
    check(chip["chip"] == "GH100", f"h200-sxm planned for {chip['chip']}")
    check("h100-sxm" in chip["skus"], f"GH100's SKUs: {chip['skus']}")
    check(chip["passes"] >= 1, f"passes {chip['passes']}")
    roles = {r["role"]: r for r in chip["roles"]}
    check(roles["dram_bytes_read"]["metric"] == "dram__bytes_read.sum", "DRAM read metric")
    check(roles["ffma2"]["status"] == "absent" and roles["ffma2"]["metric"] is None,
          "Hopper has no packed FP32 counter")
    check(chip["metrics"] == [r["metric"] for r in chip["roles"] if r["metric"]],
          "metrics are not the chosen ones in role order")
    lower = json.loads(env.planned("--chip", "gh100", "--json"))
    check(lower == plan, "--chip gh100 and --sku h200-sxm plan differently")
    check(roles["dram_bytes_read"]["contains"] == [] and "held_by" not in roles["dram_bytes_read"],
          "a counter of its own role only holds nothing")
    gb100_plan = json.loads(env.planned("--chip", "gb100", "--json"))
    gb100 = {r["role"]: r for r in gb100_plan["chips"][0]["roles"]}
    folded = "sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp32.sum"
    check(gb100["tensor_fp8_f32"]["metric"] == folded and
          gb100["tensor_fp8_f32"]["contains"] == ["tensor_fp6_fp4_f32", "tensor_fp4"],
          f"GB100's FP8 counter holds: {gb100['tensor_fp8_f32'].get('contains')}")
    check(gb100["tensor_fp4"].get("held_by") == folded,
          f"GB100's FP4 role held by {gb100['tensor_fp4'].get('held_by')}")


def counters_bad_input_is_one_line_exit_2(env):
    p = env.run("counters", "--chip", "xx100")
    if WITHOUT_CUPTI in p.stderr:
        one_line_error(p, WITHOUT_CUPTI)  # what this build must say instead
        return
    one_line_error(p, r"unknown chip 'xx100'", r"GH100", r"GB202")
    one_line_error(env.run("counters"), r"--chip")
    one_line_error(env.run("counters", "--sku", "no-such-gpu"), r"unknown SKU")
    one_line_error(env.run("counters", "--chip", "gh100", "--sku", "h100-sxm"))


def main():
    scenario, cli, work = sys.argv[1:4]
    try:
        return run_scenario(globals(), scenario, work, lambda: Env(cli))
    except Skip as e:
        print(f"{scenario}: SKIPPED: {e}")
        return SKIP


if __name__ == "__main__":
    sys.exit(main())
