#!/usr/bin/env python3
"""Fails when an #include crosses a layer upward.

usage: check_layers.py [ROOT]     check the repository at ROOT (default: this one)
       check_layers.py --self-test  show that an upward include is caught

LAYERS below is the one statement of the layers (docs/architecture-layers.md
draws it): each layer names its folders and the layers it builds on.  A file
may include headers of its own layer and of every layer below it (the layers
it uses, and theirs, transitively); an include that resolves to a header of any
other layer is reported, one line each, and the exit status is 1.  Includes
that resolve to no file of the repository (the standard library, CUDA, Boost,
...) are not layers' business.  tests/ sits above everything and is not
checked.
"""
import os
import re
import sys
import tempfile

# layer: (folders, the layers it uses).  Bottom first.
LAYERS = {
    "emu": (["emu"], []),  # CUDA on the CPU: runtime, PTX and wmma emulation
    "portability": (["portability"], ["emu"]),  # rl/cuda.hpp, rl/ptx*.hpp, rl/check.hpp
    "roofline": (["roofline"], []),  # pure C++: cost, results I/O, model, charts
    "kernels": (["kernels"], ["portability", "roofline"]),
    "bench": (["bench"], ["kernels"]),  # harness, backends, the executables
    "tools": (["tools"], ["kernels"]),  # developer tools: emu_speed
}

SOURCE_SUFFIXES = (".h", ".hpp", ".cuh", ".inc", ".cpp", ".cc", ".cu")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.MULTILINE)


def below(layer):
    """The layers `layer` may include from: itself and all it uses, transitively."""
    seen, todo = set(), [layer]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(LAYERS[name][1])
    return seen


def layer_of(path):
    """The layer of a repository-relative path (its longest matching folder), or None."""
    best, best_len = None, -1
    for name, (folders, _) in LAYERS.items():
        for folder in folders:
            if (path == folder or path.startswith(folder + "/")) and len(folder) > best_len:
                best, best_len = name, len(folder)
    return best


def layer_files(root):
    """Repository-relative paths of every source and header file in a layer."""
    files = []
    for folders, _ in LAYERS.values():
        for folder in folders:
            for dirpath, _, names in os.walk(os.path.join(root, folder)):
                for name in names:
                    in_cuda_include = "/cuda_include" in dirpath.replace(os.sep, "/")
                    if name.endswith(SOURCE_SUFFIXES) or in_cuda_include:
                        files.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(set(f.replace(os.sep, "/") for f in files))


def resolve(included, including, files):
    """The repository files an include can name: beside the including file, or
    any file whose path ends with it (found through some include directory)."""
    beside = os.path.normpath(os.path.join(os.path.dirname(including), included)).replace(os.sep, "/")
    if beside in files:
        return [beside]
    return [f for f in files if f.endswith("/" + included)]


def missing_folders(root):
    return [f"check_layers.py: layer {name}'s folder {folder}/ does not exist (update LAYERS)"
            for name, (folders, _) in LAYERS.items() for folder in folders
            if not os.path.isdir(os.path.join(root, folder))]


def violations(root):
    problems = []
    files = set(layer_files(root))
    for path in sorted(files):
        layer = layer_of(path)
        allowed = below(layer)
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for match in INCLUDE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            for target in resolve(match.group(1), path, files):
                target_layer = layer_of(target)
                if target_layer not in allowed:
                    problems.append(f"{path}:{line}: {layer} includes \"{match.group(1)}\" "
                                    f"({target}, layer {target_layer}), which is not below it")
    return problems


def self_test():
    """An emulator header that includes the portability layer must be reported."""
    with tempfile.TemporaryDirectory() as root:
        for folders, _ in LAYERS.values():
            for folder in folders:
                os.makedirs(os.path.join(root, folder))
        headers = {
            "portability/include/rl/cuda.hpp": '#include "rl/emu/runtime.hpp"\n',
            "emu/include/rl/emu/runtime.hpp": '#include <vector>\n',
            "emu/src/good.cpp": '#include "rl/emu/runtime.hpp"\n',
            "emu/src/bad.cpp": '#include "rl/emu/runtime.hpp"\n#include "rl/cuda.hpp"\n',
        }
        for path, text in headers.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        found = violations(root)
    expected = ('emu/src/bad.cpp:2: emu includes "rl/cuda.hpp" '
                "(portability/include/rl/cuda.hpp, layer portability), which is not below it")
    if found != [expected]:
        print(f"check_layers.py --self-test: expected [{expected!r}], got {found!r}")
        return 1
    print(f"check_layers.py --self-test: caught: {found[0]}")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print("usage: check_layers.py [ROOT] | --self-test", file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                       "..", "..")
    stale = missing_folders(root)
    if stale:
        print("\n".join(stale))
        return 1
    problems = violations(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers.py: {len(problems)} include(s) cross a layer upward "
              "(layers: tests/repo/check_layers.py LAYERS, docs/architecture-layers.md)")
        return 1
    print(f"check_layers.py: {len(layer_files(root))} files, every include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
