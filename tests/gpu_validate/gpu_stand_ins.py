#!/usr/bin/env python3
"""scripts/gpu_validate's GPU path on a machine without one: stand-ins for
nvidia-smi, cmake, ctest, bench_roofline and roofline record what the script
asks of them and answer as the real ones do.  Checks the architecture chosen
for each compute capability, the flags of every command (only the benchmark,
the CLI and rl_tests_gpu built; ctest -L gpu one at a time; the benchmark's
sampling flags under a budget), the device facts kept, the claim verdicts and
gpu test names in SUMMARY.md, exit 1 when a gpu test fails, and a benchmark
cut by its budget reported as incomplete with what it left out.

usage: gpu_stand_ins.py SOURCE_DIR"""

import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT = os.path.join(sys.argv[1], "scripts", "gpu_validate")

NVIDIA_SMI = """\
#!/bin/sh
case "$*" in
  -L) echo "GPU 0: stand-in H100 (UUID: GPU-0)";;
  *compute_cap*) echo "$FAKE_CC";;
  *driver_version*) echo "580.00";;
  -q) echo "stand-in nvidia-smi -q";;
  "topo -m") echo "stand-in topology";;
  *) echo "| CUDA Version: 13.0 |";;
esac
"""

CMAKE = """\
#!/bin/bash
echo "$*" >> "$FAKE_LOG/cmake.args"
if [[ "$*" == *"--target help"* ]]; then
  # As long as the real list, and more: a reader that stops early must not lose it.
  echo "... rl_tests_gpu"; seq -f '... target_%g' 200000
elif [[ "$1" == --build ]]; then
  mkdir -p "$2/bench"
  cp "$FAKE_BIN/bench.sh" "$2/bench/bench_roofline"
  cp "$FAKE_BIN/roofline.sh" "$2/bench/roofline"
else
  for a in "$@"; do [[ "$a" == -DCMAKE_CUDA_ARCHITECTURES=* ]] && arch="${a#*=}"; done
  mkdir -p "$4"
  echo "CMAKE_CUDA_ARCHITECTURES:STRING=$arch" > "$4/CMakeCache.txt"
fi
"""

CTEST = """\
#!/bin/bash
[[ "$*" == *--show-only* ]] && { echo '{"tests": []}'; exit 0; }
echo "$*" >> "$FAKE_LOG/ctest.args"
echo "$LD_LIBRARY_PATH" >> "$FAKE_LOG/ctest.ld_library_path"
prev=""; for a in "$@"; do [[ "$prev" == --output-junit ]] && junit="$a"; prev="$a"; done
failure=""; [[ -n "$FAKE_GPU_FAIL" ]] && failure='<failure message="Failed"/>'
cat > "$junit" <<EOX
<testsuite name="Linux" tests="3">
 <testcase name="gemm_gpu_test.Ladder/a" status="run"/>
 <testcase name="gemm_gpu_test.Ladder/b" status="run">$failure</testcase>
 <testcase name="hopper_gpu_test.Wgmma.c" status="notrun"><skipped message="no"/><system-out>gpu.hpp:9: Skipped
needs compute capability 9.0
</system-out></testcase>
</testsuite>
EOX
if [[ -n "$FAKE_GPU_FAIL" ]]; then echo "67% tests passed, 1 tests failed out of 3"; exit 8; fi
# CMake 3.25 says "0 tests failed"; newer ctest leaves that out when none failed.
[[ -n "$FAKE_CTEST_NEW" ]] && echo "100% tests passed out of 3" || echo "100% tests passed, 0 tests failed out of 3"
"""

BENCH = """\
#!/bin/bash
case "$*" in
  *--list*) printf 'kernel family\\nhbm_copy x\\ngemm_a x\\ngemm_b x\\n'; exit 0;;
  *--version*) echo "bench_roofline stand-in"; exit 0;;
esac
echo "$*" >> "$FAKE_LOG/bench.args"
echo "$LD_LIBRARY_PATH" >> "$FAKE_LOG/bench.ld_library_path"
prev=""; for a in "$@"; do [[ "$prev" == --out ]] && out="$a"; prev="$a"; done
mkdir -p "$out"
write() {  # write COMPLETE RUN_EXTRA
  cat > "$out/results.json" <<EOJ
{"schema_version": 1,
 "context": {"backend": "cuda", "device": {"name": "stand-in H100", "compute_capability": "9.0",
             "sm_count": 132}},
 "run": {"complete": $1, "interrupted_by": "$2" $3},
 "ceilings": [{"name": "tc.bf16", "kind": "compute", "value": 7.31e14, "unit": "FLOP/s",
               "method": "m", "datasheet": 9.89e14, "derived_peak": 9.0e14,
               "observed_sm_mhz": 1755}],
 "kernels": [{"name": "gemm_a", "status": "ok", "validated": true, "shape": {"M": 8}},
             {"name": "gemm_b", "status": "skipped", "validated": false,
              "error": "needs compute capability 10.0", "shape": {"M": 8}}]}
EOJ
  echo '{"benchmarks": []}' > "$out/benchmarks.json"
}
if [[ -n "$FAKE_BENCH_HANG" ]]; then
  write false "" ""
  trap 'write false SIGINT ", \\"left_out\\": [\\"gemm_b\\"]"; exit 130' INT
  while :; do sleep 0.2; done
fi
write true "" ""
"""

ROOFLINE = """\
#!/bin/bash
echo "$*" >> "$FAKE_LOG/roofline.args"
case "$1" in plot) echo "<svg/>" > "$4";; report) echo "<html></html>" > "$4";; esac
"""


class GpuStandIns(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.bin = os.path.join(self.tmp.name, "bin")
        self.log = os.path.join(self.tmp.name, "log")
        self.out = os.path.join(self.tmp.name, "out")
        os.makedirs(self.bin)
        os.makedirs(self.log)
        for name, text in (("nvidia-smi", NVIDIA_SMI), ("cmake", CMAKE), ("ctest", CTEST),
                           ("bench.sh", BENCH), ("roofline.sh", ROOFLINE),
                           ("nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 13.0'\n")):
            path = os.path.join(self.bin, name)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args, cc="9.0", **env):
        full = dict(os.environ, PATH=self.bin + os.pathsep + os.environ["PATH"], FAKE_CC=cc,
                    FAKE_LOG=self.log, FAKE_BIN=self.bin, RL_GPU_VALIDATE_SKIP_SETUP="1", **env)
        return subprocess.run([SCRIPT, "--out", self.out, "--build-dir",
                               os.path.join(self.tmp.name, "build"), *args],
                              env=full, capture_output=True, text=True, timeout=120)

    def read(self, *parts):
        with open(os.path.join(*parts)) as f:
            return f.read()

    def test_all_steps_pass_with_the_gpu_flags_and_a_full_summary(self):
        done = self.run_script()
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        cmake = self.read(self.log, "cmake.args")
        self.assertIn("-DCMAKE_CUDA_ARCHITECTURES=90a", cmake)
        self.assertIn("--target bench_roofline roofline\n", cmake)
        self.assertIn("--target rl_tests_gpu\n", cmake)
        ctest = self.read(self.log, "ctest.args")
        self.assertIn("-L ^gpu$", ctest)
        self.assertIn("-j 1", ctest)
        self.assertNotIn("--stop-time", ctest)  # no --test-budget: each test its own timeout
        bench = self.read(self.log, "bench.args")
        for flag in ("--size large", "--counters", "--timeout ", "--max-noise 1",
                     "--min-samples 10"):
            self.assertIn(flag, bench)
        self.assertEqual(self.read(self.out, "system", "nvidia-smi-q.txt"),
                         "stand-in nvidia-smi -q\n")
        self.assertIn("stand-in topology", self.read(self.out, "system", "nvidia-smi-topo.txt"))
        self.assertIn("driver: 580.00", self.read(self.out, "system", "versions.txt"))
        summary = self.read(self.out, "SUMMARY.md")
        self.assertIn("tc.bf16: 731 TFLOP/s = 74% of the 989 TFLOP/s claim", summary)
        self.assertIn("derived peak at the 1755 MHz seen: 900 TFLOP/s (81%)", summary)
        self.assertIn("2 passed, 0 failed, 1 skipped (junit/ctest-gpu.xml)", summary)
        self.assertIn("- passed: gemm_gpu_test.Ladder/a, gemm_gpu_test.Ladder/b", summary)
        self.assertIn("- skipped: hopper_gpu_test.Wgmma.c (needs compute capability 9.0)", summary)
        self.assertIn("| gemm_b | M=8 | skipped | needs compute capability 10.0 |", summary)
        self.assertTrue(os.path.getsize(os.path.join(self.out, "bundle.tar.gz")) > 0)

    def test_each_compute_capability_builds_its_own_architecture(self):
        for cc, arch in (("10.0", "100a"), ("10.3", "103a"), ("12.0", "120a"), ("12.1", "121a"),
                         ("8.0", "80")):
            done = self.run_script("--step", "build", cc=cc)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            configure = [line for line in self.read(self.log, "cmake.args").splitlines()
                         if line.startswith("--preset default")]
            self.assertIn("-DCMAKE_CUDA_ARCHITECTURES=%s " % arch, configure[-1] + " ")

    def test_a_test_budget_stops_ctest_at_a_time_of_day(self):
        self.assertEqual(self.run_script("--step", "build").returncode, 0)
        done = self.run_script("--step", "test", "--test-budget", "120")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertRegex(self.read(self.log, "ctest.args"), r"--stop-time \d\d:\d\d:\d\d")

    def make_pack(self, arch="90a"):
        """A build folder as the packing machine left it, packed by scripts/gpu_pack."""
        built = os.path.join(self.tmp.name, "elsewhere", "build")
        os.makedirs(os.path.join(built, "bench"))
        os.makedirs(os.path.join(built, "tests", "gemm"))
        with open(os.path.join(built, "CMakeCache.txt"), "w") as f:
            f.write("CMAKE_CUDA_ARCHITECTURES:STRING=%s\n" % arch)
        for name, text in (("bench_roofline", BENCH), ("roofline", ROOFLINE)):
            path = os.path.join(built, "bench", name)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o755)
        with open(os.path.join(built, "tests", "gemm", "CTestTestfile.cmake"), "w") as f:
            f.write('include("%s/tests/gemm/gemm_gpu_test[1]_include.cmake")\n' % built)
        with open(os.path.join(built, "tests", "gemm", "gemm_gpu_test[1]_tests.cmake"), "w") as f:
            f.write('add_test([=[a]=] %s/tests/gemm/gemm_gpu_test)\n' % built)
        pack = os.path.join(self.tmp.name, "gpu-pack-%s.tar.xz" % arch)
        done = subprocess.run([os.path.join(os.path.dirname(SCRIPT), "gpu_pack"), "--arch", arch,
                               "--prebuilt", "--build-dir", built, "--out", pack],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        return built, pack

    def test_a_pack_from_another_machine_is_unpacked_with_this_machine_s_paths(self):
        built, pack = self.make_pack()
        done = self.run_script("--pack", pack, "--step", "build")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("unpacked 'gpu-pack-90a.tar.xz' (built for 90a on another machine)",
                      done.stdout)
        here = os.path.join(self.tmp.name, "build")
        testfile = self.read(here, "tests", "gemm", "CTestTestfile.cmake")
        self.assertIn(here + "/tests/gemm/gemm_gpu_test[1]_include.cmake", testfile)
        self.assertNotIn(built, testfile + self.read(here, "tests", "gemm",
                                                     "gemm_gpu_test[1]_tests.cmake"))
        self.assertIn("ld_library_path=" + here + "/pack-lib",
                      self.read(self.out, "state.env"))
        self.assertFalse(os.path.exists(os.path.join(self.log, "cmake.args")))  # nothing built

    def test_the_steps_after_a_pack_s_build_step_see_its_library_path(self):
        _, pack = self.make_pack()
        done = self.run_script("--pack", pack)  # every step in one run
        self.assertIn("build | passed", self.read(self.out, "SUMMARY.md"), done.stdout)
        here = os.path.join(self.tmp.name, "build")
        self.assertIn(here + "/pack-lib", self.read(self.log, "ctest.ld_library_path"))

    def test_a_bench_step_in_another_out_folder_sees_the_pack_s_library_path(self):
        # The documented second pass: --out NEW --build-dir THE_PACK_S --step bench.
        _, pack = self.make_pack()
        self.assertEqual(self.run_script("--pack", pack, "--step", "build").returncode, 0)
        self.out = os.path.join(self.tmp.name, "out-2")
        done = self.run_script("--step", "bench")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        here = os.path.join(self.tmp.name, "build")
        self.assertIn(here + "/pack-lib", self.read(self.log, "bench.ld_library_path"))

    def test_the_test_step_keeps_ctest_s_count_in_either_wording(self):
        for new in ("", "1"):
            done = self.run_script("--step", "build")
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            done = self.run_script("--step", "test", FAKE_CTEST_NEW=new)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertRegex(done.stdout, r"test: passed after \d+ s \(ctest -L gpu: 100% tests "
                             r"passed(, 0 tests failed)? out of 3\)")

    def test_a_pack_for_another_architecture_fails_the_build_step_saying_so(self):
        _, pack = self.make_pack("90a")
        done = self.run_script("--pack", pack, "--step", "build", cc="10.0")
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("the pack was built for 90a; this GPU needs 100a", done.stdout)

    def test_a_failed_gpu_test_is_named_and_exits_1(self):
        done = self.run_script(FAKE_GPU_FAIL="1")
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        summary = self.read(self.out, "SUMMARY.md")
        self.assertIn("| test | failed |", summary)
        self.assertIn("- failed: gemm_gpu_test.Ladder/b", summary)

    def test_a_benchmark_cut_by_its_budget_is_kept_and_reported_incomplete(self):
        self.assertEqual(self.run_script("--step", "build").returncode, 0)
        bench = self.run_script("--step", "bench", "--bench-budget", "10", FAKE_BENCH_HANG="1")
        self.assertEqual(bench.returncode, 1, bench.stdout + bench.stderr)
        self.assertIn("bench: partial", bench.stdout)
        report = self.run_script("--step", "report")
        self.assertEqual(report.returncode, 1, report.stdout + report.stderr)
        summary = self.read(self.out, "SUMMARY.md")
        self.assertIn("| bench | partial |", summary)
        self.assertIn("**incomplete** (run.complete = false; interrupted by: SIGINT)", summary)
        self.assertIn('run.left_out: ["gemm_b"]', summary)
        self.assertIn("| test | not run |", summary)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
