"""End-to-end scenarios of `roofline fleet` (through roofline_cli_for_tests).

usage: fleet_e2e.py SCENARIO CLI FIXTURE_WRITER WORKDIR
Each GPU's run is the writer's compare-base fixture (four ceilings, three
kernels with 20 samples each; fixture numbers, not GPU data) given a host and
a uuid, with its rates scaled where a scenario says so.  Exit 0 when the
behaviour holds, 1 (with the reason) when not.
"""
import json
import os
import re
import shutil
import subprocess
import sys

from rltest import check, load, one_line_error, run_scenario


class Env:
    def __init__(self, cli, writer, work):
        self.cli, self.writer, self.work = cli, writer, work
        base = os.path.join(work, "base.json")
        subprocess.run([writer, "compare-base", base], check=True)
        with open(base, encoding="utf-8") as f:
            self.base = json.load(f)

    def path(self, *parts):
        return os.path.join(self.work, *parts)

    def gpu(self, fleet, i, scale=1.0, ceiling_scale=None, edit=None, host=None):
        """Writes GPU i of `fleet`: rates x scale (ceilings x ceiling_scale)."""
        r = json.loads(json.dumps(self.base))
        r["context"]["host"] = host or f"node{i:02d}"
        r["context"]["device"]["uuid"] = f"GPU-{i:08d}-0000-0000-0000-000000000000"
        for c in r["ceilings"]:
            c["value"] *= scale if ceiling_scale is None else ceiling_scale
        for k in r["kernels"]:
            t = k["time_s"]
            for key in ("median", "min", "max", "stddev"):
                t[key] /= scale
            t["samples"] = [s / scale for s in t["samples"]]
            k["achieved_flops_per_s"] *= scale
            k["achieved_bytes_per_s"] *= scale
        if edit:
            edit(r)
        folder = self.path(fleet, f"{r['context']['host']}_{r['context']['device']['uuid']}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "results.json"), "w", encoding="utf-8") as f:
            json.dump(r, f, indent=2)
        return f"{r['context']['host']} {r['context']['device']['uuid']}"

    def fleet(self, name, count, special=None):
        """GPUs 0..count-1 within +-1% of each other; special[i] = gpu() kwargs."""
        special = special or {}
        labels = []
        for i in range(count):
            kwargs = special.get(i, {"scale": 1.0 + 0.005 * ((i % 5) - 2)})
            labels.append(self.gpu(name, i, **kwargs))
        return self.path(name), labels

    def run(self, *args):
        p = subprocess.run([self.cli, *args], capture_output=True, text=True, timeout=30)
        check(p.returncode >= 0, f"roofline {args} died with signal {-p.returncode}")
        return p


def statuses(report):
    out = {}
    for g in report["gpus"]:
        out.setdefault(g["status"], []).append(g["label"])
    return out


# ---------------------------------------------------------------- scenarios --

def healthy_fleet_flags_nothing_exit_0(env):
    fleet, labels = env.fleet("healthy", 8)
    out = env.path("out")
    p = env.run("fleet", fleet, "-o", out)
    check(p.returncode == 0, f"exit {p.returncode}\n{p.stdout}{p.stderr}")
    check("### Outliers" not in p.stdout and "Failed GPUs" not in p.stdout, p.stdout)
    check(p.stdout.rstrip().endswith("wrote " + os.path.join(out, "fleet.html")), p.stdout)
    check(re.search(r"no outlier, no failed GPU → exit 0\.", p.stdout), p.stdout)
    report = load(os.path.join(out, "fleet.json"))
    check(report["exit_code"] == 0 and statuses(report) == {"ok": labels}, statuses(report))
    html = open(os.path.join(out, "fleet.html"), encoding="utf-8").read()
    check(html.startswith("<!DOCTYPE html>") and "<script" not in html, "not a plain HTML file")
    check(not re.search(r"(src|href)\s*=\s*\"https?:", html), "external reference in fleet.html")
    # Four ceilings, a strip chart each, a point per GPU, none an outlier.
    check(html.count("<svg") == 4 and html.count("class=\"gpu-point\"") == 4 * 8, "strip charts")
    check("class=\"gpu-point outlier\"" not in html, "an outlier drawn in a healthy fleet")


def degraded_gpu_is_named_exit_1(env):
    # node03's roofs at 90.2% of its seven identical siblings; its kernels unchanged.
    special = {i: {"scale": 1.0} for i in range(8)}
    special[3] = {"scale": 1.0, "ceiling_scale": 0.902}
    fleet, labels = env.fleet("degraded", 8, special)
    out = env.path("out")
    p = env.run("fleet", fleet, "-o", out)
    check(p.returncode == 1, f"exit {p.returncode}\n{p.stdout}{p.stderr}")
    report = load(os.path.join(out, "fleet.json"))
    check(statuses(report).get("outlier") == [labels[3]], f"outliers {statuses(report)}")
    reasons = [o["reason"] for o in report["gpus"][3]["outliers"]]
    check(len(reasons) == 4 and reasons[0].startswith("hbm.copy 1.8 GB/s, 9.8% below the fleet median 2 GB/s"),
          reasons)
    check(f"**{labels[3]}**: hbm.copy 1.8 GB/s, 9.8% below the fleet median 2 GB/s (limit 5%)" in p.stdout,
          p.stdout)
    html = open(os.path.join(out, "fleet.html"), encoding="utf-8").read()
    check(html.count("class=\"gpu-point outlier\"") == 4, "one red point per ceiling")
    named = re.findall(r'class="outlier-label"[^>]*>([^<]*)<', html)
    check(named == [labels[3]] * 4, f"outlier labels {named}")
    # A kernel 20% slower on one GPU is named with its shape and rate.
    fleet, labels = env.fleet("kernel", 5, {1: {"scale": 0.8, "ceiling_scale": 1.0}})
    p = env.run("fleet", fleet, "--format", "json")
    report = json.loads(p.stdout)
    check(p.returncode == 1 and statuses(report).get("outlier") == [labels[1]], p.stdout)
    check(report["gpus"][1]["outliers"][0]["reason"].startswith(
        "copy_vec4 [n=1048576] 6.71 GFLOP/s, 20.0% below the fleet median 8.39 GFLOP/s"),
        report["gpus"][1]["outliers"])


def failed_gpus_are_reported_exit_1(env):
    def broken(r):
        k = r["kernels"][1]
        k.update(status="failed_validation", validated=False, time_s=None,
                 error="element 3: got NaN, expected 0.25")

    def interrupted(r):
        r["run"].update(complete=False, interrupted_by="SIGTERM")

    fleet, labels = env.fleet("failed", 6, {2: {"edit": broken}, 4: {"edit": interrupted}})
    marker = env.path("failed", "node09_unknown-gpu-task9")
    os.makedirs(marker)
    with open(os.path.join(marker, "task-failed.txt"), "w", encoding="utf-8") as f:
        f.write("host=node09\nuuid=\ntask=9\nexit_status=2\nreason=bench_roofline: no CUDA device\n")
    p = env.run("fleet", fleet, "--format", "json")
    check(p.returncode == 1, f"exit {p.returncode}\n{p.stdout}{p.stderr}")
    report = json.loads(p.stdout)
    failed = {g["label"]: g["failures"] for g in report["gpus"] if g["status"] == "failed"}
    check(sorted(failed) == sorted([labels[2], labels[4], "node09 (no uuid) node09_unknown-gpu-task9"]),
          f"failed {failed}")
    check(failed[labels[2]] == ["gelu_fused [n=1048576] failed validation: element 3: got NaN, expected 0.25"],
          failed[labels[2]])
    check(failed[labels[4]] == ["run incomplete (interrupted by SIGTERM)"], failed[labels[4]])
    check(failed["node09 (no uuid) node09_unknown-gpu-task9"] ==
          ["task 9: bench_roofline: no CUDA device (exit 2)"], failed)
    text = env.run("fleet", fleet).stdout
    check("### Failed GPUs" in text and "3 failed GPU(s) → exit 1." in text, text)


def expected_gpus_without_a_run_fail_exit_1(env):
    fleet, _ = env.fleet("expect", 4)
    check(env.run("fleet", fleet, "--expect", "4").returncode == 0, "4 of 4 runs present")
    p = env.run("fleet", fleet, "--expect", "6")
    check(p.returncode == 1 and "2 of the 6 expected GPU(s) left no results" in p.stdout, p.stdout)


def drift_names_the_gpus_that_differ(env):
    def old_driver(r):
        r["context"].update(driver_version="535.104.05", ecc_enabled=False)

    def driver(r):
        r["context"].update(driver_version="550.54.15", ecc_enabled=True)

    special = {i: {"edit": driver} for i in range(4)}
    special[4] = {"edit": old_driver}
    fleet, labels = env.fleet("drift", 5, special)
    p = env.run("fleet", fleet)
    check(p.returncode == 0, f"drift alone is not a failure; exit {p.returncode}\n{p.stdout}")
    check(f"- driver: 550.54.15 (4 GPUs); 535.104.05 on {labels[4]}" in p.stdout, p.stdout)
    check(f"- ECC: on (4 GPUs); off on {labels[4]}" in p.stdout, p.stdout)


def too_few_gpus_to_judge_exit_3(env):
    fleet, _ = env.fleet("two", 2)
    p = env.run("fleet", fleet)
    check(p.returncode == 3 and "not judged" in p.stdout and "--min-gpus" in p.stdout,
          f"exit {p.returncode}\n{p.stdout}")
    check(env.run("fleet", fleet, "--min-gpus", "2").returncode == 0, "--min-gpus 2 judges two")


def bad_input_is_one_line_exit_2(env):
    fleet, _ = env.fleet("good", 3)
    os.makedirs(env.path("empty", "sub"))
    one_line_error(env.run("fleet", env.path("nowhere")), "nowhere: not a folder")
    one_line_error(env.run("fleet", fleet, env.path("empty")), "empty: no results.json")
    # Unreadable JSON, another schema version: the file is named.
    bad = env.path("bad", "nodeX")
    os.makedirs(bad)
    with open(os.path.join(bad, "results.json"), "w", encoding="utf-8") as f:
        f.write("{\"schema_version\": 1, \"context\": ")
    one_line_error(env.run("fleet", fleet, env.path("bad")), re.escape(os.path.join(bad, "results.json")),
                   r"line \d+, column \d+")
    v2 = env.path("v2", "nodeY")
    os.makedirs(v2)
    r = json.loads(json.dumps(env.base))
    r["schema_version"] = 2
    with open(os.path.join(v2, "results.json"), "w", encoding="utf-8") as f:
        json.dump(r, f)
    one_line_error(env.run("fleet", fleet, env.path("v2")), "schema_version 2")
    # The same GPU twice.
    env.gpu("twice/a", 1)
    env.gpu("twice/b", 1)
    one_line_error(env.run("fleet", env.path("twice")), "two runs of GPU node01 GPU-00000001")
    # Flags of the other mode, and --baseline with two AFTER folders.
    one_line_error(env.run("fleet", fleet, "--alpha", "0.01"), "--baseline")
    one_line_error(env.run("fleet", fleet, "--baseline", fleet, "--spread-k", "2"), "--spread-k")
    one_line_error(env.run("fleet", "--baseline", fleet, fleet, fleet), "one AFTER_DIR")
    one_line_error(env.run("fleet"))
    # Nothing is written for bad input.
    p = env.run("fleet", fleet, env.path("empty"), "-o", env.path("out"))
    check(p.returncode == 2 and not os.path.exists(env.path("out", "fleet.json")), "wrote for bad input")
    one_line_error(env.run("fleet", fleet, "-o", "/proc/no/such/dir"), "cannot")


def help_states_the_rule_and_exit_codes(env):
    p = env.run("fleet", "--help")
    check(p.returncode == 0, p.stderr)
    text = " ".join(p.stdout.split())
    for needle in ["Exit status: 0", "1 an outlier", "2 bad input", "3 nothing judged",
                   "--threshold", "--spread-k", "--min-gpus", "--expect", "--baseline",
                   "1.4826 x MAD / median"]:
        check(needle in text, f"fleet --help lacks {needle!r}\n{p.stdout}")


def baseline(env, after_special, expect_exit):
    before, labels = env.fleet("before", 6, {i: {"scale": 1.0} for i in range(6)})
    after, _ = env.fleet("after", 6, after_special)
    p = env.run("fleet", "--baseline", before, after)
    check(p.returncode == expect_exit, f"exit {p.returncode}, expected {expect_exit}\n{p.stdout}{p.stderr}")
    j = json.loads(env.run("fleet", "--baseline", before, after, "--format", "json").stdout)
    return p.stdout, j, labels


def baseline_same_fleet_passes_exit_0(env):
    text, j, _ = baseline(env, {i: {"scale": 1.0} for i in range(6)}, 0)
    check(j["exit_code"] == 0 and len(j["gpus"]) == 6 and not j["regressions"], j)
    check("every GPU passed the gate → exit 0." in text, text)


def baseline_one_slow_gpu_is_local_exit_1(env):
    special = {i: {"scale": 1.0} for i in range(6)}
    special[2] = {"scale": 1 / 1.10}  # times 10% longer on node02 only
    text, j, labels = baseline(env, special, 1)
    check([g["exit_code"] for g in j["gpus"]] == [0, 0, 1, 0, 0, 0], [g["exit_code"] for g in j["gpus"]])
    check(len(j["regressions"]) == 3 and all(r["scope"] == "local" and r["slow_on"] == [labels[2]]
                                             for r in j["regressions"]), j["regressions"])
    check(f"| copy_vec4 | n=1048576 | CPU emulator (test fixture, not GPU data) | 1 of 6 | 1.000 | local | {labels[2]} |"
          in text, text)


def baseline_every_gpu_slow_is_fleet_wide_exit_1(env):
    text, j, _ = baseline(env, {i: {"scale": 1 / 1.10} for i in range(6)}, 1)
    check(all(r["scope"] == "fleet-wide" and len(r["slow_on"]) == 6 and abs(r["median_ratio"] - 1.1) < 1e-9
              for r in j["regressions"]) and len(j["regressions"]) == 3, j["regressions"])
    check("| 6 of 6 | 1.100 | fleet-wide |" in text, text)


def baseline_unmatched_gpus_are_listed(env):
    before, labels = env.fleet("before", 4, {i: {"scale": 1.0} for i in range(4)})
    after = env.path("after")
    for i in (0, 1, 2, 7):
        env.gpu("after", i)
    new_label = f"node07 GPU-00000007-0000-0000-0000-000000000000"
    p = env.run("fleet", "--baseline", before, after)
    check(p.returncode == 1, f"a GPU missing from AFTER fails the gate; exit {p.returncode}\n{p.stdout}")
    check(f"- only in {before} (fails the gate: its after-state is unknown): {labels[3]}" in p.stdout, p.stdout)
    check(f"- only in {after} (not judged): {new_label}" in p.stdout, p.stdout)
    j = json.loads(env.run("fleet", "--baseline", before, after, "--format", "json").stdout)
    check(j["only_before"] == [labels[3]] and j["only_after"] == [new_label], j)
    # With the same GPUs on both sides it passes.
    shutil.rmtree(os.path.join(after, os.path.basename(new_label.replace(" ", "_"))))
    env.gpu("after", 3)
    check(env.run("fleet", "--baseline", before, after).returncode == 0, "matched fleets pass")


def main():
    scenario, cli, writer, work = sys.argv[1:5]
    return run_scenario(globals(), scenario, work, lambda: Env(cli, writer, work))


if __name__ == "__main__":
    sys.exit(main())
