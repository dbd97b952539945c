#!/usr/bin/env python3
"""Skipped tests of the last ctest run, grouped by the reason they gave.

usage: skip_summary.py build/<preset>/Testing/Temporary/LastTest.log

ctest's own output marks a skipped test "***Skipped" and hides why; the
reason is in the test's output, which ctest keeps in LastTest.log:
  GoogleTest:  "<file>:<line>: Skipped" followed by the GTEST_SKIP message
  our Python checks: a line "SKIPPED: <reason>" (exit code 77)
Prints nothing when nothing was skipped.
"""
import collections
import re
import sys


def skipped_tests(log_text):
    """(test name, reason) for every skipped test in a LastTest.log."""
    blocks = re.split(r"^\d+/\d+ Testing: ", log_text, flags=re.M)[1:]
    for block in blocks:
        name = block.split("\n", 1)[0].strip()
        output = block.split("\nOutput:\n", 1)[-1].split("<end of output>", 1)[0]
        reason = None
        gtest = re.search(r": Skipped\n(.*)", output)
        if gtest and "[  SKIPPED ]" in output:
            reason = gtest.group(1).strip() or "skipped (no reason given)"
        else:
            plain = re.search(r"^SKIPPED: (.*)$", output, flags=re.M)
            if plain:
                reason = plain.group(1).strip()
        if reason is not None:
            yield name, reason


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as error:
        print(f"skip_summary: cannot read {sys.argv[1]}: {error.strerror}", file=sys.stderr)
        return 2
    groups = collections.OrderedDict()
    for name, reason in skipped_tests(text):
        groups.setdefault(reason, []).append(name)
    if not groups:
        return 0
    total = sum(len(names) for names in groups.values())
    print(f"\nSkipped tests ({total}), by reason:")
    for reason, names in groups.items():
        example = names[0] + (f" and {len(names) - 1} more" if len(names) > 1 else "")
        print(f"  {len(names):4d} skipped: {reason}  (e.g. {example})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
