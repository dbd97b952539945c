"""The `slurm` test: scripts/fleet-slurm on a real single-node Slurm.

usage: slurm_fleet.py REPO BENCH_EMU ROOFLINE

Needs Slurm and munge (scripts/setup --with-slurm installs them; the test
installs nothing).  Starts munged, slurmctld and slurmd as this user in a
scratch folder of its own (short, under the system's temporary folder: munge's
socket path must fit a Unix socket name), on free loopback ports, submits a
fleet of five emulator tasks through scripts/fleet-slurm (task 3 degraded to 1% of its
measured rates, task 4 failing without results; both through the test-only
degrading_bench.py), waits for the aggregation job, and checks that the report
names exactly task 3's GPU as the outlier and task 4's as failed.  Then it stops
the daemons it started, and removes the folder unless the test failed (the
daemons' logs are in it).  Exit 0 pass, 1 fail, 77 skipped (Slurm is not
installed, or cannot be started here: the reason is printed).
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from rltest import SKIP, Failure, Skip, check

HERE = os.path.dirname(os.path.abspath(__file__))


def free_ports(count):
    socks, ports = [], []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def tail(path, lines=5):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return " | ".join(f.read().splitlines()[-lines:])
    except OSError:
        return f"(no {os.path.basename(path)})"


class Cluster:
    """munged + slurmctld + slurmd in one scratch folder; stop() kills only them."""

    def __init__(self, work):
        self.work = work
        self.started = []  # (name, pid file)
        self.host = socket.gethostname().split(".")[0]
        self.env = dict(os.environ, SLURM_CONF=os.path.join(work, "slurm.conf"))

    def path(self, name):
        return os.path.join(self.work, name)

    def daemon(self, name, argv):
        p = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise Skip(f"{name} did not start (exit {p.returncode}): "
                       f"{(p.stderr or p.stdout).strip()[-300:]} {tail(self.path(name + '.log'))}")
        self.started.append((name, self.path(name + ".pid")))

    def start(self):
        os.makedirs(self.path("state"))
        os.makedirs(self.path("spool"))
        os.chmod(self.work, 0o700)  # munged refuses a key or socket others can reach
        key = self.path("munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        sock = self.path("munge.sock")
        self.daemon("munged", ["munged", f"--socket={sock}", f"--key-file={key}",
                               f"--pid-file={self.path('munged.pid')}",
                               f"--log-file={self.path('munged.log')}",
                               f"--seed-file={self.path('munged.seed')}", "--force"])
        ctld_port, slurmd_port = free_ports(2)
        user = subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
        cpus = os.cpu_count() or 1
        with open(self.path("slurm.conf"), "w", encoding="utf-8") as f:
            f.write(f"""# Single-node test cluster of tests/fleet/slurm_fleet.py (loopback only).
ClusterName=rltest
SlurmctldHost={self.host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
SlurmUser={user}
SlurmdUser={user}
StateSaveLocation={self.path('state')}
SlurmdSpoolDir={self.path('spool')}
SlurmctldPidFile={self.path('slurmctld.pid')}
SlurmdPidFile={self.path('slurmd.pid')}
SlurmctldLogFile={self.path('slurmctld.log')}
SlurmdLogFile={self.path('slurmd.log')}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName={self.host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=1000 State=UNKNOWN
PartitionName=rltest Nodes={self.host} Default=YES MaxTime=INFINITE State=UP
""")
        conf = self.path("slurm.conf")
        self.daemon("slurmctld", ["slurmctld", "-f", conf])
        self.daemon("slurmd", ["slurmd", "-f", conf, "-N", self.host])
        deadline = time.time() + 60
        while time.time() < deadline:
            p = subprocess.run(["sinfo", "-h", "-o", "%T"], env=self.env, capture_output=True,
                               text=True, timeout=30)
            if p.returncode == 0 and p.stdout.strip() == "idle":
                return
            time.sleep(0.5)
        raise Skip(f"the Slurm node never became idle: {tail(self.path('slurmctld.log'))} "
                   f"{tail(self.path('slurmd.log'))}")

    def stop(self):
        for name, pid_file in reversed(self.started):
            try:
                with open(pid_file, encoding="utf-8") as f:
                    pid = int(f.read().strip())
                os.kill(pid, signal.SIGTERM)
            except (OSError, ValueError) as e:
                print(f"stopping {name}: {e}", file=sys.stderr)
        # Wait until they are gone, so the next run finds the ports free.
        deadline = time.time() + 15
        for name, pid_file in reversed(self.started):
            try:
                with open(pid_file, encoding="utf-8") as f:
                    pid = int(f.read().strip())
            except (OSError, ValueError):
                continue
            while time.time() < deadline and os.path.exists(f"/proc/{pid}") and \
                    "zombie" not in open(f"/proc/{pid}/status").read():
                time.sleep(0.2)


def run_fleet(cluster, repo, bench, roofline):
    out = cluster.path("fleet")
    env = dict(cluster.env, FLEET_TEST_REAL_BENCH=bench, FLEET_TEST_DEGRADE_TASK="3",
               FLEET_TEST_DEGRADE_FACTOR="0.01", FLEET_TEST_FAIL_TASK="4")
    # Five tiny emulator runs (a ceiling and one GELU kernel, a second or two
    # each).  The tasks share this machine's two cores with each other and with
    # the rest of the test suite, so the emulator's rates move by tens of
    # percent, at times a few times over, between tasks: this test checks the
    # plumbing (Slurm, one folder per GPU, markers, the aggregation naming the
    # GPU), with a degraded task 100 times slower and a plain 80% threshold
    # (--spread-k=0).  The statistics are tested on exact data in
    # tests/roofline/test_fleet.cpp.
    p = subprocess.run(
        [os.path.join(repo, "scripts", "fleet-slurm"), "--emulator", "--gpus", "5", "--out", out,
         "--bench", os.path.join(HERE, "degrading_bench.py"), "--roofline", roofline,
         "--time", "00:05:00", "--fleet-arg=--threshold=80", "--fleet-arg=--spread-k=0", "--",
         "--family", "gelu", "--size", "small",
         "--benchmark_filter=hbm_copy_vec16|gelu_tanh_f32_vec4/",
         "--benchmark_repetitions=3", "--timeout", "0.5"],
        env=env, capture_output=True, text=True, timeout=60)
    print(p.stdout, p.stderr, sep="")
    check(p.returncode == 0, f"fleet-slurm exit {p.returncode}")
    check("aggregation job" in p.stdout and "fleet.html" in p.stdout,
          "fleet-slurm does not say the job ids and where the report appears")
    deadline = time.time() + 240
    while time.time() < deadline and not os.path.exists(os.path.join(out, "fleet.exit")):
        time.sleep(1)
    check(os.path.exists(os.path.join(out, "fleet.exit")),
          f"the aggregation never ran: {tail(cluster.path('slurmctld.log'))}")
    time.sleep(0.5)
    table = open(os.path.join(out, "fleet.txt"), encoding="utf-8").read()
    print(table)
    exit_code = int(open(os.path.join(out, "fleet.exit")).read())
    check(exit_code == 1, f"roofline fleet exit {exit_code}, expected 1 (an outlier, a failed GPU)")
    report = json.load(open(os.path.join(out, "report", "fleet.json"), encoding="utf-8"))
    host = cluster.host
    by_status = {}
    for g in report["gpus"]:
        by_status.setdefault(g["status"], []).append(g["folder"])
    check(by_status.get("outlier") == [f"{host}_emulator-task3"],
          f"outliers {by_status.get('outlier')}, expected exactly task 3's GPU; {by_status}")
    check(by_status.get("failed") == [f"{host}_emulator-task4"],
          f"failed {by_status.get('failed')}, expected exactly task 4's GPU; {by_status}")
    check(sorted(by_status.get("ok", [])) == [f"{host}_emulator-task{i}" for i in range(3)],
          f"ok GPUs {by_status.get('ok')}")
    check(f"{host} (no uuid) {host}_emulator-task3" in table and "below the fleet median" in table,
          "the table does not name the degraded GPU with its reason")
    check("task 4: no results.json" in table, "the table does not say why task 4 failed")
    html = open(os.path.join(out, "report", "fleet.html"), encoding="utf-8").read()
    check(f"{host}_emulator-task3" in html and "<svg" in html, "fleet.html lacks the outlier")


def main():
    repo, bench, roofline = sys.argv[1:4]
    work = tempfile.mkdtemp(prefix="rl-slurm-")
    started = time.time()
    cluster = Cluster(work)
    try:
        missing = [tool for tool in ("munged", "slurmctld", "slurmd", "sbatch", "sinfo")
                   if not shutil.which(tool)]
        if missing:
            raise Skip(f"Slurm is not installed ({', '.join(missing)} not on PATH; "
                       "scripts/setup --with-slurm installs it)")
        cluster.start()
        run_fleet(cluster, repo, bench, roofline)
    except Skip as e:
        print(f"SKIPPED: {e}")
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
        return SKIP
    except Failure as e:
        print(f"FAILED: {e} (daemon logs and runs kept in {work})")
        cluster.stop()
        return 1
    except BaseException:
        print(f"(daemon logs and runs kept in {work})")
        cluster.stop()
        raise
    cluster.stop()
    shutil.rmtree(work, ignore_errors=True)
    print(f"slurm fleet: ok ({time.time() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
