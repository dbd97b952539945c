#!/usr/bin/env python3
"""Every script with a shebang under scripts/ and .ci/ is executable, both in
the working tree and in git's index. CI runs `.ci/run`, which calls
`scripts/test` directly: a rewrite that dropped the exec bit once made CI fail
with "Permission denied" before a single test ran."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def scripts_with_shebang():
    for folder in ("scripts", ".ci"):
        base = os.path.join(ROOT, folder)
        for name in sorted(os.listdir(base)):
            path = os.path.join(base, name)
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    if f.read(2) == b"#!":
                        yield os.path.join(folder, name)


def index_modes():
    """{path: mode} from git's index, or None outside a git checkout."""
    try:
        listing = subprocess.run(["git", "-C", ROOT, "ls-files", "-s", "--", "scripts", ".ci"],
                                 capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    modes = {}
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        modes[path] = meta.split()[0]
    return modes


def main():
    problems = []
    modes = index_modes()
    found = list(scripts_with_shebang())
    if not any(p == os.path.join("scripts", "test") for p in found):
        problems.append("scripts/test not found or has no shebang")
    for rel in found:
        if not os.access(os.path.join(ROOT, rel), os.X_OK):
            problems.append(f"{rel}: not executable in the working tree (chmod +x)")
        if modes is not None and rel in modes and modes[rel] != "100755":
            problems.append(f"{rel}: git index mode {modes[rel]}, want 100755 "
                            f"(git update-index --chmod=+x {rel})")
    for p in problems:
        print(p)
    print(f"{len(found)} scripts checked, {len(problems)} problems"
          + ("" if modes is not None else " (no git index: working tree only)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
