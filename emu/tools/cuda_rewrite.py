#!/usr/bin/env python3
"""Rewrites a CUDA source, as written for nvcc, into C++ the emulator compiles.

Two things in CUDA need a compiler, not a header:
  kernel<<<grid, block[, shared[, stream]]>>>(args)
      -> ::rl::emu::launch_as_written(RL_EMU_KERNEL(kernel), grid, block, shared, stream, args)
  extern __shared__ T name[][N]...;          (dynamic shared memory)
      -> T (*const name)[N]... = reinterpret_cast<...>(dynamic shared memory);
         at namespace scope, a macro naming the same pointer expression.
  asm volatile("ldmatrix...." : ...)       (inline PTX, which g++ cannot run)
      -> a call to a function declared [[gnu::error("inline PTX 'ldmatrix....'
         is not emulated ...")]]: compiling the statement fails with that one
         line at the user's line, and code the preprocessor leaves out (an
         `#if __CUDA_ARCH__` branch) or a template never instantiated builds.
Everything else is left byte for byte, and every rewrite keeps the line count of
the text it replaces, so `#line` makes the compiler's messages point at the
user's file and line.  RL_EMU_KERNEL (emu/include/rl/emu/launch.hpp) launches
through the kernel's pointer, or, for a function template whose arguments
nvcc deduces from the call, through a generic lambda that calls it.

The source is read as tokens (cuda_tokens.py: comments, string and character
literals, raw strings and preprocessor lines respected), so `<<<` in a comment or a string is
left alone and launches inside macro definitions are rewritten like any other.

Files the source includes with quotes, found next to the including file, are
rewritten too, into the same relative place under the output root, so the
rewritten source includes the rewritten header.  Usage:

  cuda_rewrite.py --source A.cu --mirror-root DIR [--depfile D]

writes DIR/<absolute path of A.cu>.cpp (next to the rewritten headers).

Errors are one line, `file:line: error: ...`, and exit status 1.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field

from cuda_tokens import (CLOSE, OPEN, RewriteError, Token, match_bracket, match_angle_back,
                         match_forward, tokenize)

ASM_KEYWORDS = ("asm", "__asm__", "__asm")
ASM_QUALIFIERS = ("volatile", "__volatile__", "inline", "goto")


def kernel_start(tokens: list[Token], i: int) -> int:
    """tokens[i] is '<<<'; index of the first token of the kernel expression."""
    j = i - 1
    if j < 0:
        raise RewriteError(tokens[i].line, "'<<<' without a kernel before it")
    while True:
        t = tokens[j]
        if t.text in (">", ">>"):
            j = match_angle_back(tokens, j) - 1
            continue
        if t.text == ")":
            k = match_bracket(tokens, j, -1)
            if k is None:
                raise RewriteError(t.line, "unbalanced ')' before '<<<'")
            j = k
        elif t.kind != "ident":
            raise RewriteError(t.line, f"unexpected '{t.text}' before '<<<' (expected a kernel name)")
        if j >= 2 and tokens[j - 1].text == "::" and tokens[j - 2].kind == "ident":
            j -= 2
            continue
        if j >= 1 and tokens[j - 1].text == "::":
            j -= 1
        return j


def split_top_level(tokens: list[Token], lo: int, hi: int) -> list[tuple[int, int]]:
    """Comma-separated parts of tokens[lo:hi] at bracket depth 0, as index ranges."""
    parts, depth, start = [], 0, lo
    for j in range(lo, hi):
        t = tokens[j].text
        if t in OPEN:
            depth += 1
        elif t in CLOSE:
            depth -= 1
        elif t == "," and depth == 0:
            parts.append((start, j))
            start = j + 1
    if start < hi:
        parts.append((start, hi))
    return parts


def launch_close(tokens: list[Token], i: int) -> int:
    """tokens[i] is '<<<'; index of the '>>' token that starts the matching '>>>'
    (the tokenizer reads '>>>' as '>>' '>'), which must be followed by '('."""
    depth = 0
    for j in range(i + 1, len(tokens) - 2):
        t = tokens[j].text
        if t in OPEN:
            depth += 1
        elif t in CLOSE:
            depth -= 1
            if depth < 0:
                break
        elif (depth == 0 and t == ">>" and tokens[j + 1].text == ">"
              and tokens[j + 1].start == tokens[j].end and tokens[j + 2].text == "("):
            return j
        elif t == ";":
            break
    raise RewriteError(tokens[i].line, "'<<<' without a matching '>>>(' (a kernel launch)")


class Rewriter:
    def __init__(self, text: str, tokens: list[Token]):
        self.text = text
        self.tokens = tokens
        self.edits: list[tuple[int, int, str]] = []  # start, end, replacement
        self.refused: dict[str, str] = {}  # function -> the inline PTX instruction it stands for

    def declarations(self) -> str:
        """The [[gnu::error]] functions that stand for refused inline PTX."""
        return "".join(
            f'[[gnu::error("inline PTX \'{instruction}\' does not run on the emulator: use the '
            f'rl::ptx wrappers (emu/docs/porting.md, \\"What does not run unchanged\\")")]] '
            f"void {function}();\n" for function, instruction in sorted(self.refused.items()))

    def span(self, lo: int, hi: int) -> str:
        """Original text of tokens[lo:hi] (hi exclusive), comments included."""
        if lo >= hi:
            return ""
        return self.text[self.tokens[lo].start:self.tokens[hi - 1].end]

    def between(self, lo: int, hi: int) -> str:
        """Original text strictly between tokens[lo] and tokens[hi], as written."""
        return self.text[self.tokens[lo].end:self.tokens[hi].start]

    def rewrite_launch(self, i: int) -> int:
        toks = self.tokens
        k0 = kernel_start(toks, i)
        close = launch_close(toks, i)  # the '>>' of '>>>'; '(' is at close + 2
        paren = close + 2
        end = match_forward(toks, paren)
        config = split_top_level(toks, i + 1, close)
        if not 2 <= len(config) <= 4:
            raise RewriteError(toks[i].line,
                               f"a launch takes 2 to 4 configuration arguments, not {len(config)}")
        defaults = [", 0", ", ::cudaStream_t{}"][len(config) - 2:]  # nvcc's defaults
        cfg = self.between(i, close) + "".join(defaults)
        args = self.between(paren, end)
        kernel = self.span(k0, i)
        new = (f"::rl::emu::launch_as_written(RL_EMU_KERNEL({kernel}), " + cfg.lstrip(" ") +
               (", " + args.lstrip(" ") if end > paren + 1 else "") + ")")
        old_start, old_end = toks[k0].start, toks[end].end
        self.edits.append((old_start, old_end, new + self.lost_newlines(old_start, old_end, new)))
        return end + 1

    def lost_newlines(self, start: int, end: int, new: str) -> str:
        """The line breaks of text[start:end] that `new` lacks, so later lines keep
        their numbers (continued, inside a macro definition)."""
        missing = self.text.count("\n", start, end) - new.count("\n")
        continued = "\\\n" in self.text[start:end]
        return (" \\\n" if continued else "\n") * max(missing, 0)

    def rewrite_extern_shared(self, i: int) -> int:
        toks = self.tokens
        j = i + 1
        while toks[j].text != "__shared__":
            j += 1
        semi = j
        while toks[semi].text != ";":
            semi += 1
        body = list(range(j + 1, semi))
        # Drop __align__(n) / __attribute__((...)) / alignas(...): the dynamic
        # shared memory base is aligned for any type.
        kept, k = [], 0
        while k < len(body):
            t = toks[body[k]]
            if t.text in ("__align__", "__attribute__", "alignas") and toks[body[k] + 1].text == "(":
                k += match_forward(toks, body[k] + 1) - body[k] + 1
                continue
            kept.append(body[k])
            k += 1
        first_bracket = next((x for x in kept if toks[x].text == "["), None)
        if first_bracket is None or toks[first_bracket - 1].kind != "ident":
            raise RewriteError(toks[i].line, "extern __shared__ needs the form `extern __shared__ T name[];`")
        if toks[first_bracket + 1].text != "]":
            raise RewriteError(toks[i].line, "extern __shared__ arrays take no first extent (`name[]`)")
        if any(toks[x].text == "," for x in kept if x < first_bracket):
            raise RewriteError(toks[i].line, "declare one extern __shared__ array per declaration")
        name = toks[first_bracket - 1].text
        type_text = " ".join(toks[x].text for x in kept if x < first_bracket - 1)
        extents = self.span(first_bracket + 2, semi)  # "[N][M]" or ""
        base = "::rl::emu::detail::dynamic_shared_memory()"
        if extents:
            pointer_type = f"{type_text} (*)" + extents
            declaration = f"{type_text} (*const {name}){extents} = reinterpret_cast<{pointer_type}>({base});"
            macro_value = f"(reinterpret_cast<{pointer_type}>({base}))"
        else:
            declaration = f"{type_text}* const {name} = static_cast<{type_text}*>({base});"
            macro_value = f"(static_cast<{type_text}*>({base}))"
        start, end = toks[i].start, toks[semi].end
        if self.at_namespace_scope(i):
            line_start = self.text.rfind("\n", 0, start) + 1
            line_end = self.text.find("\n", end)
            line_end = len(self.text) if line_end < 0 else line_end
            if self.text[line_start:start].strip() or self.text[end:line_end].strip().split("//")[0].strip():
                raise RewriteError(toks[i].line, "put a namespace-scope extern __shared__ declaration on its own line")
            new = f"#define {name} {macro_value}"
        else:
            new = declaration
        self.edits.append((start, end, new + self.lost_newlines(start, end, new)))
        return semi + 1

    def rewrite_inline_asm(self, i: int) -> int:
        """asm [volatile] ("ptx" : ...): a call that fails to compile, naming
        the instruction; an empty template (a compiler barrier) is kept."""
        toks = self.tokens
        j = i + 1
        while j < len(toks) and toks[j].text in ASM_QUALIFIERS:
            j += 1
        if j >= len(toks) or toks[j].text != "(":
            return i + 1
        end = match_forward(toks, j)
        k = j + 1
        template = ""
        while k < end and toks[k].kind == "string":
            template += unescape(toks[k].text)
            k += 1
        instruction = first_instruction(template)
        if instruction is None:
            return end + 1
        function = "rl_emu_inline_ptx_" + re.sub(r"[^A-Za-z0-9]", "_", instruction)
        self.refused[function] = instruction
        new = f"{function}()"
        start, stop = toks[i].start, toks[end].end
        self.edits.append((start, stop, new + self.lost_newlines(start, stop, new)))
        return end + 1

    def at_namespace_scope(self, i: int) -> bool:
        """True when every brace enclosing tokens[i] opens a namespace or an
        extern "C" block."""
        toks = self.tokens
        stack: list[bool] = []  # per open brace: does it open a namespace-like block?
        for j in range(i):
            if toks[j].text == "{":
                k = j - 1
                while k >= 0 and (toks[k].kind == "ident" or toks[k].text == "::"):
                    k -= 1
                head = {t.text for t in toks[k + 1:j]}
                extern_c = j >= 2 and toks[j - 1].kind == "string" and toks[j - 2].text == "extern"
                stack.append("namespace" in head or extern_c)
            elif toks[j].text == "}" and stack:
                stack.pop()
        return all(stack)

    def run(self) -> str:
        toks = self.tokens
        i = 0
        while i < len(toks):
            t = toks[i]
            if t.text == "<<<" and not (i > 0 and toks[i - 1].text == "operator"):
                i = self.rewrite_launch(i)
                continue
            if t.text == "extern" and self.next_is_shared(i):
                i = self.rewrite_extern_shared(i)
                continue
            if t.text in ASM_KEYWORDS:
                i = self.rewrite_inline_asm(i)
                continue
            i += 1
        out, pos = [], 0
        for start, end, new in sorted(self.edits):
            if start < pos:
                raise RewriteError(self.text.count("\n", 0, start) + 1, "overlapping rewrites (a launch inside a launch's arguments?)")
            out.append(self.text[pos:start])
            out.append(new)
            pos = end
        out.append(self.text[pos:])
        return "".join(out)

    def next_is_shared(self, i: int) -> bool:
        toks = self.tokens
        j = i + 1
        while j < len(toks) and toks[j].text in ("__align__", "__attribute__", "alignas"):
            j = match_forward(toks, j + 1) + 1
        return j < len(toks) and toks[j].text == "__shared__"


def unescape(literal: str) -> str:
    """The characters of a (non-raw) string literal token, escapes resolved."""
    body = literal[literal.index('"') + 1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def first_instruction(template: str) -> str | None:
    """The first PTX instruction of an inline-asm template (skipping braces,
    directives such as `.reg`, labels and predicates), or None if it has none."""
    for statement in re.split(r"[;\n]", template):
        statement = statement.strip().lstrip("{}").strip()
        statement = re.sub(r"^[A-Za-z_$][\w$]*:\s*", "", statement)  # a label
        statement = re.sub(r"^@!?%?\w+\s+", "", statement)  # a predicate guard
        if not statement or statement.startswith((".", "//", "}")):
            continue
        return statement.split()[0]
    return None


def quoted_includes(tokens: list[Token]) -> list[tuple[str, int]]:
    found = []
    for i, t in enumerate(tokens[:-2]):
        if t.kind == "directive" and tokens[i + 1].text == "include" and tokens[i + 2].kind == "string":
            if tokens[i + 2].line == t.line:
                found.append((tokens[i + 2].text[1:-1], t.line))
    return found


def mirror_path(mirror_root: str, path: str) -> str:
    return os.path.join(mirror_root, os.path.abspath(path).lstrip(os.sep))


def rewrite_file(path: str, output: str, context: "Context") -> None:
    path = os.path.abspath(path)
    if path in context.done:
        return
    context.done.add(path)
    context.read.append(path)
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    except OSError as e:
        raise SystemExit(f"{path}: error: cannot read: {e.strerror}")
    try:
        tokens = tokenize(text)
        for name, _ in quoted_includes(tokens):
            candidate = os.path.normpath(os.path.join(os.path.dirname(path), name))
            if os.path.isfile(candidate):
                rewrite_file(candidate, mirror_path(context.mirror_root, candidate), context)
        rewriter = Rewriter(text, tokens)
        body = rewriter.run()
    except RewriteError as e:
        raise SystemExit(f"{path}:{e.line}: error: {e}")
    # nvcc includes the CUDA runtime in every .cu translation unit.
    new = f'#include <cuda_runtime.h>\n{rewriter.declarations()}#line 1 "{path}"\n' + body
    os.makedirs(os.path.dirname(output) or ".", exist_ok=True)
    try:
        with open(output, encoding="utf-8", errors="surrogateescape") as f:
            if f.read() == new:
                return  # unchanged: keep the timestamp, so nothing recompiles
    except OSError:
        pass
    with open(output, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(new)


@dataclass
class Context:
    mirror_root: str
    read: list[str] = field(default_factory=list)  # every file rewritten: the depfile
    done: set[str] = field(default_factory=set)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True)
    parser.add_argument("--mirror-root", required=True)
    parser.add_argument("--depfile")
    args = parser.parse_args(argv)
    context = Context(args.mirror_root)
    output = mirror_path(args.mirror_root, args.source) + ".cpp"
    try:
        rewrite_file(args.source, output, context)
    except SystemExit as e:
        print(e.code, file=sys.stderr)
        return 1
    read = context.read
    if args.depfile:
        os.makedirs(os.path.dirname(args.depfile) or ".", exist_ok=True)
        escaped = " ".join(p.replace(" ", "\\ ") for p in read)
        with open(args.depfile, "w", encoding="utf-8") as f:
            f.write(f"{output}: {escaped}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
