"""What the Python tests share: a failed expectation, a skip with its reason,
and running one named scenario in a fresh work folder.

The tests' CMake registration puts tests/support on PYTHONPATH
(rl_python_test_helpers in cmake/RlTesting.cmake); no test edits sys.path.
Exit codes follow ctest: 0 passed, 1 failed (reason printed), 77 skipped
(reason printed; the test sets SKIP_RETURN_CODE 77).
"""
import json
import os
import re
import shutil

SKIP = 77


class Failure(Exception):
    """An expectation that does not hold; the message says which and why."""


class Skip(Exception):
    """The test cannot run here; the message says why (printed, exit 77)."""


def check(condition, message):
    if not condition:
        raise Failure(message)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def one_line_error(p, *fragments, program="roofline"):
    """A completed process failed as bad input: exit 2 and one stderr line that
    starts with '<program>: ' and matches every regex in `fragments`."""
    check(p.returncode == 2, f"exit {p.returncode}, expected 2; stderr={p.stderr!r}")
    lines = p.stderr.splitlines()
    check(len(lines) == 1, f"expected one stderr line, got {lines!r}")
    check(lines[0].startswith(f"{program}: "),
          f"stderr does not start with '{program}: ': {lines[0]!r}")
    for f in fragments:
        check(re.search(f, lines[0]), f"stderr {lines[0]!r} lacks {f!r}")


def run_scenario(scenarios, scenario, work, make_env):
    """Runs scenarios[scenario](make_env()) in a fresh `work` folder: 0 ok, 1 failed."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    try:
        scenarios[scenario](make_env())
    except Failure as e:
        print(f"{scenario}: FAILED: {e}")
        return 1
    print(f"{scenario}: ok")
    return 0
