#!/usr/bin/env python3
"""Build step of the static checks (cmake/RlStatic.cmake): one kernel source,
one architecture.

    compile_cubin.py --prefix OUT/<stem>.sm_<arch> [--cuobjdump PATH] \\
        -- nvcc ARGS... -cubin -arch=sm_<arch> SRC

runs nvcc with `-Xptxas -v -o <prefix>.cubin` appended and writes
  <prefix>.ptxas.txt  nvcc's output (the ptxas resource report)
  <prefix>.sass       `cuobjdump -sass` of the cubin, when --cuobjdump is given
each atomically and only when its step succeeded, so a failed compile leaves
no report behind for make to call up to date; without --cuobjdump an old
listing is removed rather than left to describe old code.  Standard library only.

ccache cannot cache -cubin compiles, so this step keeps its own cache (like
ccache's preprocessor mode): the key is the nvcc version, the flags other than
include paths and file names, and the preprocessed device source without its
line markers, so a fresh clone in another folder hits it too.  The cache lives
in $RL_STATIC_CACHE (default ~/.cache/rl-static-cubin); RL_STATIC_CACHE=off
disables it.  On a cache hit the -MD dependency file is written from the
preprocessor's line markers (nvcc takes no -MD with -E).
"""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

CACHE_FORMAT = "1"  # bump when what a cache entry holds changes


def write_atomically(path, data):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(data)
    os.replace(tmp, path)


def cache_dir():
    where = os.environ.get("RL_STATIC_CACHE", "")
    if where == "off":
        return None
    return where or os.path.join(os.path.expanduser("~"), ".cache", "rl-static-cubin")


def cache_key(command, cuobjdump):
    """(key, included files) of `command`, or (None, None) when the
    preprocessor fails (then the compile simply runs and reports why)."""
    source = command[-1]
    flags = []
    preprocess = [command[0]]
    skip_next = False
    for arg in command[1:-1]:
        if skip_next:
            skip_next = False
            continue
        if arg == "-MF":
            skip_next = True
            continue
        if arg in ("-MD", "-cubin"):
            continue
        preprocess.append(arg)
        if not arg.startswith("-I"):
            flags.append(arg)
    with tempfile.TemporaryDirectory() as tmp:
        pre = subprocess.run(preprocess + [source, "-E", "-o", os.path.join(tmp, "pre.ii")],
                             capture_output=True, text=True)
        if pre.returncode != 0:
            return None, None
        text, files = [], []
        with open(os.path.join(tmp, "pre.ii"), encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("#"):
                    marker = line.split('"')
                    if len(marker) >= 2 and os.path.isfile(marker[1]) and marker[1] not in files:
                        files.append(marker[1])
                else:
                    text.append(line)
    version = subprocess.run([command[0], "--version"], capture_output=True, text=True).stdout
    h = hashlib.sha256()
    for part in (CACHE_FORMAT, version, " ".join(flags), os.path.basename(source),
                 "sass" if cuobjdump else "", "".join(text)):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest(), files


def write_depfile(command, target, files):
    """The make rule -MD would have written: target depends on every file read."""
    if "-MF" not in command:
        return
    depfile = command[command.index("-MF") + 1]
    write_atomically(depfile, target + " : " + " \\\n    ".join(files) + "\n")


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
    outputs = [(cubin, ".cubin"), (args.prefix + ".ptxas.txt", ".ptxas.txt")]
    if args.cuobjdump:
        outputs.append((args.prefix + ".sass", ".sass"))
    cache = cache_dir()
    key, files = cache_key(command, args.cuobjdump) if cache else (None, None)
    entry = os.path.join(cache, key[:2], key) if key else None
    if entry and all(os.path.exists(entry + ext) for _, ext in outputs):
        write_depfile(command, cubin, files)
        for path, ext in outputs:
            tmp = path + ".tmp-cache"
            shutil.copyfile(entry + ext, tmp)
            os.replace(tmp, path)
        if not args.cuobjdump and os.path.exists(args.prefix + ".sass"):
            os.remove(args.prefix + ".sass")
        return 0
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
    elif os.path.exists(args.prefix + ".sass"):
        # A listing from an earlier configuration would describe old code.
        os.remove(args.prefix + ".sass")
    if entry:
        try:
            os.makedirs(os.path.dirname(entry), exist_ok=True)
            for path, ext in outputs:
                tmp = entry + ext + ".tmp-%d" % os.getpid()
                shutil.copyfile(path, tmp)
                os.replace(tmp, entry + ext)
        except OSError:
            pass  # a cache that cannot be written costs time, never a result
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
