#!/usr/bin/env python3
"""The build targets behind one ctest label of a configured build folder, so
scripts/gpu_validate builds only what its test step runs.

    scripts/gpu_validate_targets.py BUILD_DIR LABEL

prints one line per target: `<target><TAB><executable path>`.  Works before the
targets are built: a gtest target registers its tests only once it exists
(gtest_discover_tests, DISCOVERY_MODE PRE_TEST), so its label is read from the
`<target>[N]_include.cmake` file CMake writes at configure time; the other
tests (add_test) are listed by `ctest -N`, and each argument of theirs that is a
CMake target's output in the build folder (`<dir>/CMakeFiles/<name>.dir` beside
it) counts.  Exit 2 with one line when BUILD_DIR is not a configured build
folder."""

import json
import os
import re
import subprocess
import sys

BRACKET = r"\[==\[(.*?)\]==\]"


def gtest_targets(build_dir, label):
    """(target, executable) of every gtest target whose test properties carry LABEL."""
    found = []
    for dirpath, dirnames, filenames in os.walk(build_dir):
        dirnames[:] = [d for d in dirnames if d != "CMakeFiles"]
        for name in filenames:
            if not name.endswith("_include.cmake"):
                continue
            text = open(os.path.join(dirpath, name), errors="replace").read()
            exe = re.search(r"TEST_EXECUTABLE\s+" + BRACKET, text, re.S)
            props = re.search(r"TEST_PROPERTIES\s+" + BRACKET, text, re.S)
            if not exe or not props:
                continue
            if label in labels_of(props.group(1).split(";")):
                found.append((os.path.basename(exe.group(1)), exe.group(1)))
    return found


def labels_of(properties):
    """The values after LABELS in a flattened property list (up to the next NAME)."""
    labels, inside = [], False
    for item in properties:
        if item == "LABELS":
            inside = True
        elif inside and re.fullmatch(r"[A-Z_]+", item):
            inside = False
        elif inside:
            labels.append(item)
    return labels


def other_targets(build_dir, label):
    """(target, path) of the executables add_test tests with LABEL run."""
    listing = subprocess.run(
        ["ctest", "--test-dir", build_dir, "-N", "-L", "^%s$" % re.escape(label),
         "--show-only=json-v1"], capture_output=True, text=True)
    if listing.returncode != 0:
        return []
    found = []
    root = os.path.realpath(build_dir) + os.sep
    for test in json.loads(listing.stdout).get("tests", []):
        for arg in test.get("command", []):
            path = os.path.realpath(arg) if os.path.isabs(arg) else ""
            name = os.path.basename(path)
            if path.startswith(root) and os.path.isdir(
                    os.path.join(os.path.dirname(path), "CMakeFiles", name + ".dir")):
                found.append((name, path))
    return found


def main(argv):
    if len(argv) != 3:
        print("usage: gpu_validate_targets.py BUILD_DIR LABEL", file=sys.stderr)
        return 2
    build_dir, label = argv[1], argv[2]
    if not os.path.isfile(os.path.join(build_dir, "CMakeCache.txt")):
        print("gpu_validate_targets: '%s' is not a configured build folder" % build_dir,
              file=sys.stderr)
        return 2
    seen = set()
    for target, path in gtest_targets(build_dir, label) + other_targets(build_dir, label):
        if target not in seen:
            seen.add(target)
            print("%s\t%s" % (target, path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
