#!/usr/bin/env python3
"""Compiler launcher of the static checks (cmake/RlStatic.cmake): runs one nvcc
compile of the CUDA build (rl_kernels_cuda, and the checker's fixtures) with
`-Xptxas -v` added and keeps, per target architecture, what the checks read:

    capture_static.py --source-root DIR --out-dir DIR --archs 80,89,90a \\
        [--cuobjdump PATH] -- [ccache] nvcc ARGS... -c SRC -o OBJ

(plus every architecture the compile's own --generate-code flags name),

writes, for SRC = <source-root>/<rel>/<stem>.cu,
  <out-dir>/<rel>/<stem>.sm_<arch>.ptxas.txt  ptxas's resource report for that architecture
  <out-dir>/<rel>/<stem>.sm_<arch>.sass       `cuobjdump -sass OBJ`'s listing for it
                                              (only with --cuobjdump)
  <out-dir>/<rel>/<stem>.d                    the compile's dependency file (-MF), when any

The object is the one the build links, so each kernel is compiled by nvcc once
per architecture, and the checks read the code the benchmark runs.  ptxas's
report lines are kept out of the build log; every other line of nvcc's output
(warnings, errors) passes through.  The old outputs of SRC are removed first
and the new ones written only when every step succeeded, so a failed compile
leaves no report behind; a failed listing fails the compile.  ccache replays a
cached compile's output, so a cache hit writes the same reports.  Standard
library only.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ARCH_OF_ENTRY = re.compile(r"Compiling entry function '[^']+' for 'sm_(\w+)'")
ARCH_OF_SASS = re.compile(r"^\s*code for sm_(\w+)")


def write_atomically(path, data):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(data)
    os.replace(tmp, path)


def is_report_line(line):
    """A line of ptxas's -v report (as opposed to a warning or an error)."""
    return line.startswith("ptxas info") or bool(re.match(r"\s+\d+ bytes stack frame", line))


def split_report(lines, archs):
    """ptxas's report per architecture.  nvcc runs ptxas once per architecture,
    one after the other; every entry function's block starts with a line that
    names its architecture, so a line belongs to the architecture named last
    (lines before the first such line, e.g. `0 bytes gmem`, to the next one)."""
    per_arch = {arch: [] for arch in archs}
    current, pending = None, []
    for line in lines:
        named = ARCH_OF_ENTRY.search(line)
        if named:
            current = named.group(1)
            per_arch.setdefault(current, []).extend(pending)
            pending = []
        if current is None:
            pending.append(line)
        else:
            per_arch[current].append(line)
    return per_arch


def split_sass(text, archs):
    """`cuobjdump -sass` of a fat object, one listing per architecture."""
    per_arch = {arch: [] for arch in archs}
    current = None
    for line in text.splitlines():
        named = ARCH_OF_SASS.match(line)
        if named:
            current = named.group(1)
        elif line.startswith("Fatbin "):
            current = None
        if current is not None:
            per_arch.setdefault(current, []).append(line)
    return per_arch


def argument_after(command, flag):
    """The value of the last `flag VALUE` in command, or None."""
    found = [i for i, arg in enumerate(command[:-1]) if arg == flag]
    return command[found[-1] + 1] if found else None


def architectures_in(command):
    """The SASS architectures a compile's code= flags name (sm_120a -> 120a)."""
    found = []
    for arg in command:
        if "code=" not in arg:
            continue
        for arch in re.findall(r"\bsm_(\w+?)(?=[,\]\s]|$)", arg.split("code=", 1)[1]):
            if arch not in found:
                found.append(arch)
    return found


def outputs_prefix(source, source_root, out_dir):
    """<out-dir>/<rel>/<stem> for a source under source-root, else None."""
    rel = os.path.relpath(os.path.realpath(source), os.path.realpath(source_root))
    if rel.startswith(".."):
        return None
    return os.path.join(out_dir, os.path.splitext(rel)[0])


def remove_outputs(prefix):
    folder, stem = os.path.split(prefix)
    if not os.path.isdir(folder):
        return
    for name in os.listdir(folder):
        if name == stem + ".d" or (name.startswith(stem + ".sm_")
                                   and name.endswith((".ptxas.txt", ".sass", ".cubin"))):
            os.remove(os.path.join(folder, name))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source-root", required=True, help="folder the sources are under")
    parser.add_argument("--out-dir", required=True, help="folder of the outputs")
    parser.add_argument("--archs", required=True, help="comma-separated, e.g. 80,90a")
    parser.add_argument("--cuobjdump", default="", help="cuobjdump to list SASS (empty: none)")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="-- the compile command ([launcher] nvcc ... -c SRC -o OBJ)")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    source, obj = argument_after(command, "-c"), argument_after(command, "-o")
    if not command or not source or not obj:
        print("capture_static: expected -- <compile command with -c SRC -o OBJ>", file=sys.stderr)
        return 2
    # A source's own --generate-code flags name the architectures it is
    # compiled for: without a GPU each source has its own list (an
    # architecture family's sources only that family's targets,
    # cmake/RlCuda.cmake); --archs is the target's list, for a command that
    # names none.
    archs = architectures_in(command) or [a for a in args.archs.split(",") if a]
    prefix = outputs_prefix(source, args.source_root, args.out_dir)
    if prefix is None:  # not a source the static checks read
        return subprocess.run(command).returncode
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    remove_outputs(prefix)
    try:
        nvcc = subprocess.run(command + ["-Xptxas", "-v"], capture_output=True, text=True)
    except OSError as err:
        print("capture_static: cannot run %s: %s" % (command[0], err), file=sys.stderr)
        return 1
    lines = (nvcc.stdout + nvcc.stderr).splitlines()
    if nvcc.returncode != 0:
        sys.stderr.write("\n".join(lines) + "\n")
        return nvcc.returncode
    passed_on = [line for line in lines if not is_report_line(line)]
    if passed_on:
        sys.stderr.write("\n".join(passed_on) + "\n")
    reports = split_report([line for line in lines if is_report_line(line)], archs)
    listings = {}
    if args.cuobjdump:
        dump = subprocess.run([args.cuobjdump, "-sass", obj], capture_output=True, text=True)
        if dump.returncode != 0:
            sys.stderr.write(dump.stdout + dump.stderr)
            print("capture_static: cuobjdump -sass failed for %s" % obj, file=sys.stderr)
            os.remove(obj)  # so that make compiles it again
            return 1
        listings = split_sass(dump.stdout, archs)
    for arch in archs:
        write_atomically("%s.sm_%s.ptxas.txt" % (prefix, arch), "\n".join(reports[arch]) + "\n")
        if args.cuobjdump:
            write_atomically("%s.sm_%s.sass" % (prefix, arch), "\n".join(listings[arch]) + "\n")
    depfile = argument_after(command, "-MF")
    if depfile and os.path.exists(depfile):
        shutil.copyfile(depfile, prefix + ".d")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
