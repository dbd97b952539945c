#!/usr/bin/env python3
"""scripts/gpu_validate without a GPU: with no usable nvidia-smi it must stop
with exit 2 and one line; with stand-ins for nvidia-smi, cmake, ctest and the
benchmark it must run every step, keep the logs and results in one folder and
print a summary whose verdict follows the failures it was given."""

import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "gpu_validate")

FAKE_BENCH = textwrap.dedent("""\
    #!/bin/bash
    out=""; prev=""
    for a in "$@"; do [[ "$prev" == --out ]] && out="$a"; prev="$a"; done
    mkdir -p "$out"
    cat > "$out/results.json" <<'EOJ'
    {"schema_version": 1,
     "context": {"backend": "cuda", "device": {"name": "stand-in device", "compute_capability": "9.0", "sm_count": 132}},
     "ceilings": [{"name": "hbm.copy", "kind": "memory", "value": 1.5e12, "unit": "B/s"}],
     "kernels": [{"name": "k_ok", "validated": true}, {"name": "k_bad", "validated": %s}]}
    EOJ
    """)

FAKE_CMAKE = textwrap.dedent("""\
    #!/bin/bash
    if [[ "$1" == "--build" ]]; then
      mkdir -p "$2/bench"
      cp "$FAKE_DIR/bench_roofline" "$2/bench/bench_roofline"
      printf '#!/bin/bash\\ntouch "$4"\\n' > "$2/bench/roofline"; chmod +x "$2/bench/roofline"
    fi
    """)

FAKE_CTEST = textwrap.dedent("""\
    #!/bin/bash
    if [[ "$*" == *"-L gpu"* ]]; then
      printf '1/2 Test #1: gpu.a ...   Passed\\n2/2 Test #2: gpu.b ...***Skipped\\n\\n'
      echo "100% tests passed, 0 tests failed out of 2"
    else
      echo "$FAKE_OTHER_RESULT"
      [[ "$FAKE_OTHER_RESULT" == *" 0 tests failed"* ]] || { printf '\\tThe following tests FAILED:\\n\\t  7 - unit.x (Failed)\\n'; exit 8; }
    fi
    """)


def write_exe(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)


class GpuValidate(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.fake = os.path.join(self.tmp.name, "bin")
        os.makedirs(self.fake)

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, extra_env=None, args=()):
        env = dict(os.environ, PATH=self.fake + os.pathsep + os.environ["PATH"],
                   FAKE_DIR=self.fake, RL_GPU_VALIDATE_SKIP_SETUP="1",
                   RL_GPU_VALIDATE_BUILD_DIR=os.path.join(self.tmp.name, "build"),
                   CUDA_HOME=self.tmp.name)
        env.update(extra_env or {})
        return subprocess.run([SCRIPT, *args], env=env, capture_output=True, text=True,
                              timeout=120)

    def fake_gpu(self, validated="true", other="100% tests passed, 0 tests failed out of 5"):
        write_exe(os.path.join(self.fake, "nvidia-smi"), textwrap.dedent("""\
            #!/bin/sh
            case "$*" in
              -L) echo "GPU 0: stand-in H100 (UUID: GPU-0)";;
              *compute_cap*) echo "9.0";;
            esac
            """))
        write_exe(os.path.join(self.fake, "nvcc"), "#!/bin/sh\n")
        write_exe(os.path.join(self.fake, "cmake"), FAKE_CMAKE)
        write_exe(os.path.join(self.fake, "ctest"), FAKE_CTEST)
        write_exe(os.path.join(self.fake, "bench_roofline"), FAKE_BENCH % validated)
        return {"FAKE_OTHER_RESULT": other}

    def test_without_a_driver_it_exits_2_with_one_line(self):
        write_exe(os.path.join(self.fake, "nvidia-smi"),
                  "#!/bin/sh\necho 'NVIDIA-SMI has failed: no driver'\nexit 9\n")
        out = os.path.join(self.tmp.name, "out")
        result = self.run_script(args=[out])
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertIn("no GPU", result.stderr)
        self.assertFalse(os.path.exists(out))

    def test_all_steps_passing_gives_a_clean_summary_and_exit_0(self):
        env = self.fake_gpu()
        out = os.path.join(self.tmp.name, "out")
        result = self.run_script(env, [out])
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        summary = result.stdout[result.stdout.index("=== gpu_validate summary"):]
        self.assertIn("CMAKE_CUDA_ARCHITECTURES=90a", summary)
        self.assertIn("ctest -L gpu:   1 passed, 0 failed, 1 skipped of 2", summary)
        self.assertIn("hbm.copy", summary)
        self.assertIn("1.5 TB/s", summary)
        self.assertIn("verdict:        all steps passed", summary)
        for name in ("summary.txt", "build.log", "ctest-gpu.log", "ctest-other.log",
                     "bench/results.json", "bench/roofline.svg", "bench/report.html"):
            self.assertTrue(os.path.exists(os.path.join(out, name)), name)

    def test_failed_tests_and_validation_are_named_and_exit_1(self):
        env = self.fake_gpu(validated="false", other="80% tests passed, 1 tests failed out of 5")
        out = os.path.join(self.tmp.name, "out")
        result = self.run_script(env, [out])
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        summary = result.stdout[result.stdout.index("=== gpu_validate summary"):]
        self.assertIn("failed: unit.x", summary)
        self.assertIn("FAILED:         ctest -LE gpu", summary)
        self.assertIn("1 failed validation: k_bad", summary)
        self.assertIn("FAILED:         kernel validation on the GPU", summary)


if __name__ == "__main__":
    unittest.main(verbosity=2)
