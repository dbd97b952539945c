#!/usr/bin/env python3
"""scripts/gpu_validate refuses bad input before doing anything: a bad flag, a
bad value, an unwritable or foreign output folder, and (without --emulator) a
machine with no usable GPU each give exit 2, one line on stderr naming the
problem, nothing on stdout and nothing written.

usage: bad_input.py SOURCE_DIR"""

import os
import stat
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(sys.argv[1], "scripts", "gpu_validate")


class BadInput(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "out")
        # A driver that answers but lists no GPU, first on PATH: the GPU
        # path must stop here even on a machine with a real GPU.
        self.bin = os.path.join(self.tmp.name, "bin")
        os.makedirs(self.bin)
        smi = os.path.join(self.bin, "nvidia-smi")
        with open(smi, "w") as f:
            f.write("#!/bin/sh\necho 'NVIDIA-SMI has failed: no driver'\nexit 9\n")
        os.chmod(smi, os.stat(smi).st_mode | stat.S_IEXEC)

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, args, words, script=SCRIPT):
        env = dict(os.environ, PATH=self.bin + os.pathsep + os.environ["PATH"])
        done = subprocess.run([script, *args], env=env, capture_output=True, text=True,
                              timeout=60)
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        self.assertEqual(done.stdout, "")
        lines = done.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, done.stderr)
        self.assertTrue(lines[0].startswith(os.path.basename(script) + ": "), lines[0])
        self.assertIn(words, lines[0])
        return lines[0]

    def test_unknown_flag(self):
        self.refused(["--emulator", "--out", self.out, "--size", "small"],
                     "unknown flag '--size'")
        self.assertFalse(os.path.exists(self.out))

    def test_flag_without_its_value(self):
        self.refused(["--emulator", "--step"], "--step expects a value")

    def test_unknown_step(self):
        self.refused(["--emulator", "--out", self.out, "--step=bild"],
                     "--step expects build, test, bench, report or all, got 'bild'")
        self.assertFalse(os.path.exists(self.out))

    def test_budget_out_of_range(self):
        self.refused(["--emulator", "--bench-budget", "9"], "--bench-budget expects whole seconds")
        self.refused(["--emulator", "--bench-budget", "1m"], "--bench-budget expects whole seconds")
        self.refused(["--emulator", "--test-budget", "5"], "--test-budget expects whole seconds")
        self.refused(["--emulator", "--test-budget", "2h"], "--test-budget expects whole seconds")

    def test_pack_flags(self):
        self.refused(["--emulator", "--pack", "x.tar.xz"], "--pack is for a GPU machine")
        missing = os.path.join(self.tmp.name, "none.tar.xz")
        self.refused(["--pack", missing], "--pack: cannot read")
        pack = os.path.join(os.path.dirname(SCRIPT), "gpu_pack")
        self.refused([], "--arch is required", script=pack)
        self.refused(["--arch", "hopper"], "--arch expects a CUDA architecture", script=pack)
        self.refused(["--arch", "90a", "--prebuilt", "--build-dir", self.tmp.name],
                     "is not a build folder configured for 90a", script=pack)

    def test_unwritable_output_folder(self):
        blocker = os.path.join(self.tmp.name, "file")
        open(blocker, "w").close()
        self.refused(["--emulator", "--out", os.path.join(blocker, "out")],
                     "cannot write to output folder")

    def test_no_gpu_without_emulator_points_to_it(self):
        line = self.refused(["--out", self.out], "no GPU")
        self.assertIn("--emulator", line)
        self.assertFalse(os.path.exists(self.out))

    def test_a_folder_of_something_else_is_refused_untouched(self):
        os.makedirs(os.path.join(self.out, "logs"))
        self.refused(["--emulator", "--out", self.out], "is not empty and holds no gpu_validate run")
        self.assertEqual(os.listdir(self.out), ["logs"])

    def test_a_folder_of_the_other_mode_is_refused_untouched(self):
        os.makedirs(self.out)
        state = os.path.join(self.out, "state.env")
        with open(state, "w") as f:
            f.write("mode=gpu\nbuild_dir=/nowhere\n")
        self.refused(["--emulator", "--out", self.out, "--step", "report"], "holds a gpu run")
        with open(state) as f:
            self.assertEqual(f.read(), "mode=gpu\nbuild_dir=/nowhere\n")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
