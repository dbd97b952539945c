#!/usr/bin/env python3
"""scripts/gpu_validate --emulator, one step per command as on a GPU visit
(build, test, bench, report, each resuming from the output folder), against an
already-built tree: each step prints its plan and expected time before it
starts, every step passes, and bundle.tar.gz (under 20 MB) holds the results
(results.json valid against the schema), the chart, the report, every step's
log, the JUnit file, the device facts marked skipped, the versions and a
SUMMARY.md that says what an emulator run cannot judge.

usage: emulator_bundle.py SOURCE_DIR BUILD_DIR
Exit 77 (skipped, with the reason) only when jsonschema is missing, after
every other check passed."""

import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest

SOURCE, BUILD = sys.argv[1], sys.argv[2]
SCRIPT = os.path.join(SOURCE, "scripts", "gpu_validate")
# Short on purpose: the unit label and a full emulated run are CI's own tests;
# here the point is the script's commands, flags and bundle.
TESTS = r"^roofline\.results_file_validates_against_schema_v1$|^repo\."
BENCH = ["--family", "gelu", "--benchmark_repetitions=1",
         "--benchmark_filter=^(gelu_tanh_f32|hbm_copy_vec16)"]
SKIP_REASON = []


def read(*parts):
    with open(os.path.join(*parts)) as f:
        return f.read()


def shadow_build(tmp):
    """A build folder that is BUILD's binaries and BUILD's tests/repo and
    tests/roofline tests, so the test step's ctest writes its Testing/ logs
    here: in BUILD it would overwrite the LastTest.log of the ctest running
    this test."""
    shadow = os.path.join(tmp, "build")
    os.makedirs(shadow)
    os.symlink(os.path.join(BUILD, "bench"), os.path.join(shadow, "bench"))
    os.symlink(os.path.join(BUILD, "CMakeCache.txt"), os.path.join(shadow, "CMakeCache.txt"))
    with open(os.path.join(shadow, "CTestTestfile.cmake"), "w") as f:
        for area in ("repo", "roofline"):
            f.write('subdirs("%s")\n' % os.path.join(BUILD, "tests", area))
    return shadow


def run_steps(tmp, out):
    env = dict(os.environ, RL_GPU_VALIDATE_SKIP_SETUP="1")
    common = ["--emulator", "--out", out]
    commands = [
        ["--step", "build", "--build-dir", shadow_build(tmp), "--prebuilt"],
        ["--step", "test", "--tests", TESTS],
        ["--step", "bench", "--bench-budget", "120", "--", *BENCH],
        ["--step", "report"],
    ]
    results = []
    for extra in commands:
        start = time.monotonic()
        done = subprocess.run([SCRIPT, *common, *extra], env=env, capture_output=True,
                              text=True, timeout=400)
        results.append((extra[1], done, time.monotonic() - start))
    return results


class EmulatorBundle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "gv")
        cls.steps = run_steps(cls.tmp.name, cls.out)
        for name, done, seconds in cls.steps:
            print("step %s: exit %d, %.1f s" % (name, done.returncode, seconds))
        cls.bundle = os.path.join(cls.out, "bundle.tar.gz")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_step_passes_and_announces_its_plan_and_expected_time_first(self):
        for name, done, _ in self.steps:
            self.assertEqual(done.returncode, 0, "%s:\n%s%s" % (name, done.stdout, done.stderr))
            lines = done.stdout.splitlines()
            expected = [i for i, l in enumerate(lines) if l.startswith("gpu_validate: %s: expected:"
                                                                      % name)]
            outcome = [i for i, l in enumerate(lines) if l.startswith("gpu_validate: %s: passed"
                                                                     % name)]
            self.assertTrue(expected and outcome and expected[0] < outcome[0], done.stdout)

    def test_bench_uses_the_harness_sampling_flags_under_a_budget(self):
        log = read(self.out, "logs", "bench.log").splitlines()[0]
        for flag in ("timeout --signal=INT", "bench_roofline_emu --size small", "--timeout ",
                     "--max-noise ", "--min-samples ", "--family gelu"):
            self.assertIn(flag, log)
        self.assertNotIn("--benchmark_min_time", log)

    def test_bundle_holds_every_file_under_20_mb(self):
        self.assertLess(os.path.getsize(self.bundle), 20 * 1024 * 1024)
        with tarfile.open(self.bundle) as tar:
            names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        for name in ("SUMMARY.md", "state.env", "bench/results.json", "bench/benchmarks.json",
                     "bench/roofline.svg", "bench/report.html", "logs/build.log",
                     "logs/test.log", "logs/bench.log", "logs/report.log", "junit/ctest-unit.xml",
                     "junit/ctest-gpu.skipped.txt", "system/nvidia-smi-q.txt",
                     "system/nvidia-smi-topo.txt", "system/versions.txt"):
            self.assertIn(name, names)

    def test_results_are_complete_and_valid_against_the_schema(self):
        results = json.loads(read(self.out, "bench", "results.json"))
        self.assertTrue(results["run"]["complete"])
        self.assertEqual(results["context"]["backend"], "emulator")
        self.assertTrue(any(k["name"].startswith("gelu") for k in results["kernels"]))
        json.loads(read(self.out, "bench", "benchmarks.json"))
        try:
            import jsonschema
        except ImportError as error:
            SKIP_REASON.append("jsonschema not importable (%s): results.json not checked "
                               "against the schema" % error)
            return
        schema = json.loads(read(SOURCE, "results", "schema-v1.json"))
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(results))
        self.assertEqual([e.message for e in errors], [])

    def test_chart_and_report_are_rendered(self):
        svg = read(self.out, "bench", "roofline.svg")
        html = read(self.out, "bench", "report.html")
        self.assertTrue(svg.lstrip().startswith("<svg") or "<svg" in svg[:500])
        self.assertIn("<html", html[:500].lower())

    def test_device_facts_say_skipped_and_versions_say_what_is_unknown(self):
        system = os.path.join(self.out, "system")
        for name in ("nvidia-smi-q.txt", "nvidia-smi-topo.txt"):
            self.assertTrue(read(system, name).startswith("skipped:"))
        versions = read(system, "versions.txt")
        self.assertIn("driver: unknown", versions)
        self.assertIn("cuBLAS/cuDNN at run time: not loaded", versions)

    def test_summary_names_steps_verdicts_records_and_tests(self):
        summary = read(self.out, "SUMMARY.md")
        for step in ("build", "test", "bench", "report"):
            self.assertIn("| %s | passed |" % step, summary)
        self.assertIn("none: an emulator run", summary)
        self.assertIn("complete: every selected benchmark ran", summary)
        self.assertIn("ctest -L gpu: skipped: --emulator run", summary)
        self.assertIn("## Other tests (ctest -L unit)", summary)
        self.assertRegex(summary, r"[1-9]\d* passed, 0 failed, 0 skipped \(junit/ctest-unit.xml\)")
        self.assertIn("## Records failed or skipped", summary)


if __name__ == "__main__":
    outcome = unittest.main(argv=sys.argv[:1], verbosity=2, exit=False).result
    if not outcome.wasSuccessful():
        sys.exit(1)
    if SKIP_REASON:
        print("skipped: " + SKIP_REASON[0])
        sys.exit(77)
