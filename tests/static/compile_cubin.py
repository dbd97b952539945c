#!/usr/bin/env python3
"""Build step of the static checks (cmake/RlStatic.cmake): one kernel source,
one architecture.

    compile_cubin.py --prefix OUT/<stem>.sm_<arch> [--cuobjdump PATH] -- nvcc ARGS... -cubin -arch=sm_<arch> SRC

runs nvcc with `-Xptxas -v -o <prefix>.cubin` appended and writes
  <prefix>.ptxas.txt  nvcc's output (the ptxas resource report)
  <prefix>.sass       `cuobjdump -sass` of the cubin, when --cuobjdump is given
each atomically and only when its step succeeded, so a failed compile leaves
no report behind for make to call up to date.  Standard library only.
"""

import argparse
import os
import subprocess
import sys
import tempfile


def write_atomically(path, data):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(data)
    os.replace(tmp, path)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prefix", required=True, help="output path without extension")
    parser.add_argument("--cuobjdump", default="", help="cuobjdump to dump SASS (empty: none)")
    parser.add_argument("nvcc_command", nargs=argparse.REMAINDER,
                        help="-- nvcc and its arguments (without -o)")
    args = parser.parse_args(argv)
    command = args.nvcc_command[1:] if args.nvcc_command[:1] == ["--"] else args.nvcc_command
    if not command:
        print("compile_cubin: no nvcc command after --", file=sys.stderr)
        return 2
    cubin = args.prefix + ".cubin"
    try:
        nvcc = subprocess.run(command + ["-Xptxas", "-v", "-o", cubin], capture_output=True,
                              text=True)
    except OSError as err:
        print("compile_cubin: cannot run %s: %s" % (command[0], err), file=sys.stderr)
        return 1
    report = nvcc.stdout + nvcc.stderr
    if nvcc.returncode != 0:
        sys.stderr.write(report)
        print("compile_cubin: nvcc failed for %s" % args.prefix, file=sys.stderr)
        return 1
    write_atomically(args.prefix + ".ptxas.txt", report)
    if args.cuobjdump:
        dump = subprocess.run([args.cuobjdump, "-sass", cubin], capture_output=True, text=True)
        if dump.returncode != 0:
            sys.stderr.write(dump.stdout + dump.stderr)
            print("compile_cubin: cuobjdump -sass failed for %s" % cubin, file=sys.stderr)
            return 1
        write_atomically(args.prefix + ".sass", dump.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
