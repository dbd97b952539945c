"""scripts/fleet-slurm without a Slurm: what it submits, and what a task does.

usage: fleet_slurm_script.py SCENARIO REPO WORKDIR
A stand-in `sbatch` first on PATH records its arguments and answers job ids,
so the GPU path (--gpus-per-task=1, partition, node list, time limit) is
checked here; the `slurm` test runs the emulator path on a real Slurm.
Exit 0 when the behaviour holds, 1 (with the reason) when not.
"""
import os
import stat
import subprocess
import sys

from rltest import check, run_scenario

FAKE_SBATCH = """#!/usr/bin/env bash
# Records one line per call (arguments separated by tabs) and answers a job id.
n=$(( $(wc -l < "$FAKE_SBATCH_LOG" 2>/dev/null || echo 0) + 1 ))
(IFS=$'\\t'; echo "$*") >> "$FAKE_SBATCH_LOG"
echo "$((1000 + n))"
"""


class Env:
    def __init__(self, repo, work):
        self.repo, self.work = repo, work
        bin_dir = self.path("bin")
        os.makedirs(bin_dir)
        self.executable(os.path.join(bin_dir, "sbatch"), FAKE_SBATCH)
        # Stand-ins for the two binaries: the script only checks they exist.
        self.bench = self.executable(self.path("bench_roofline"), "#!/bin/sh\nexit 0\n")
        self.roofline = self.executable(self.path("roofline"), "#!/bin/sh\nexit 0\n")
        self.log = self.path("sbatch.log")
        self.env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"],
                        FAKE_SBATCH_LOG=self.log)

    def path(self, *parts):
        return os.path.join(self.work, *parts)

    @staticmethod
    def executable(path, text):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return path

    def submit(self, *args):
        return subprocess.run([os.path.join(self.repo, "scripts", "fleet-slurm"), *args],
                              env=self.env, capture_output=True, text=True, timeout=30)

    def calls(self):
        with open(self.log, encoding="utf-8") as f:
            return [line.rstrip("\n").split("\t") for line in f]


def submits_one_gpu_per_task_with_an_afterany_aggregation(env):
    out = env.path("fleet")
    p = env.submit("--gpus", "8", "--out", out, "--partition", "h100", "--nodelist", "gpu[01-02]",
                   "--time", "00:20:00", "--ceilings-only", "--bench", env.bench, "--roofline",
                   env.roofline, "--sbatch-arg=--account=perf", "--fleet-arg=--threshold=3",
                   "--", "--size", "large")
    check(p.returncode == 0, f"exit {p.returncode}\n{p.stdout}{p.stderr}")
    array, aggregate = env.calls()
    for arg in ["--array=0-7", "--gpus-per-task=1", "--partition=h100", "--nodelist=gpu[01-02]",
                "--time=00:20:00", "--account=perf"]:
        check(arg in array, f"array job lacks {arg}: {array}")
    check(not any(a.startswith("--cpus-per-task") for a in array), array)
    check("--dependency=afterany:1001" in aggregate and "--partition=h100" in aggregate
          and "--account=perf" in aggregate and "--gpus-per-task=1" not in aggregate, aggregate)
    check("submitted array job 1001 (8 task(s), one GPU each) and aggregation job 1002" in p.stdout,
          p.stdout)
    check(f"{out}/report/fleet.html" in p.stdout and f"{out}/fleet.exit" in p.stdout, p.stdout)
    task = open(os.path.join(out, "fleet-task.sh"), encoding="utf-8").read()
    check("flags=(--ceilings-only --size large )" in task, "bench flags not in the task script")
    agg = open(os.path.join(out, "fleet-aggregate.sh"), encoding="utf-8").read()
    check("fleet_args=(--threshold=3 )" in agg and '--expect "$gpus"' in agg, agg)


def emulator_requests_no_gpu(env):
    p = env.submit("--gpus", "2", "--out", env.path("emu"), "--emulator", "--bench", env.bench,
                   "--roofline", env.roofline)
    check(p.returncode == 0, p.stderr)
    array = env.calls()[0]
    check("--cpus-per-task=1" in array and "--gpus-per-task=1" not in array, array)


def task_names_its_folder_by_host_and_uuid_and_leaves_a_marker_when_it_fails(env):
    out = env.path("fleet")
    failing = env.executable(env.path("failing_bench"),
                             "#!/bin/sh\necho 'bench_roofline: no CUDA device' >&2\nexit 2\n")
    check(env.submit("--gpus", "2", "--out", out, "--bench", failing, "--roofline",
                     env.roofline).returncode == 0, "submit")
    host = subprocess.run(["hostname", "-s"], capture_output=True, text=True).stdout.strip()
    run = dict(env.env, SLURM_ARRAY_TASK_ID="1", CUDA_VISIBLE_DEVICES="GPU-5a1b-0001")
    p = subprocess.run([os.path.join(out, "fleet-task.sh")], env=run, timeout=30)
    check(p.returncode == 2, f"the task exits with the bench's status, got {p.returncode}")
    marker = os.path.join(out, "runs", f"{host}_GPU-5a1b-0001", "task-failed.txt")
    check(os.path.exists(marker), f"no marker at {marker}")
    text = open(marker, encoding="utf-8").read()
    check(text == f"host={host}\nuuid=GPU-5a1b-0001\ntask=1\nexit_status=2\n"
                  "reason=no results.json: bench_roofline: no CUDA device\n", text)
    # A task that ran writes no marker.
    ok = env.executable(env.path("ok_bench"),
                        "#!/bin/sh\nwhile [ \"$1\" != --out ]; do shift; done\n"
                        "echo '{}' > \"$2/results.json\"\n")
    out2 = env.path("fleet2")
    check(env.submit("--gpus", "1", "--out", out2, "--bench", ok, "--roofline",
                     env.roofline).returncode == 0, "submit")
    p = subprocess.run([os.path.join(out2, "fleet-task.sh")],
                       env=dict(run, CUDA_VISIBLE_DEVICES="GPU-77"), timeout=30)
    folder = os.path.join(out2, "runs", f"{host}_GPU-77")
    check(p.returncode == 0 and os.path.exists(os.path.join(folder, "results.json"))
          and not os.path.exists(os.path.join(folder, "task-failed.txt")), os.listdir(folder))


def bad_usage_is_one_line_exit_2(env):
    for args, fragment in [([], "--gpus N is required"),
                           (["--gpus", "0", "--out", env.path("x")], "positive number"),
                           (["--gpus", "2"], "--out DIR is required"),
                           (["--gpus", "2", "--out", env.path("x"), "--frobnicate"], "unknown option"),
                           (["--gpus", "2", "--out", env.path("x"), "--bench", env.path("none")],
                            "not found or not executable")]:
        p = env.submit(*args)
        lines = p.stderr.splitlines()
        check(p.returncode == 2 and len(lines) == 1 and lines[0].startswith("fleet-slurm: ")
              and fragment in lines[0], f"{args}: exit {p.returncode}, stderr {p.stderr!r}")
    check(not os.path.exists(env.log), "sbatch was called for bad usage")


def main():
    scenario, repo, work = sys.argv[1:4]
    return run_scenario(globals(), scenario, work, lambda: Env(repo, work))


if __name__ == "__main__":
    sys.exit(main())
