#!/usr/bin/env python3
"""Static checks of the compiled GPU code: resource budgets and SASS expectations.

Every kernel declares, in its own source next to the kernel, what its compiled
code must look like, on one comment line per declaration:

    // rl-static: kernel=gelu_tanh_f32_vec4 max_regs=40 max_smem=0 sass=LDG.E.128,STG.E.128

The build (cmake/RlStatic.cmake) compiles every kernel source once, for every
target architecture, with `-Xptxas -v` (capture_static.py), keeps the ptxas
report in <stem>.sm_<arch>.ptxas.txt and the SASS (cuobjdump -sass) in
<stem>.sm_<arch>.sass.
`check` reads both and verifies every entry function against the declarations.

A kernel may have several declarations; a line longer than the 100 columns
clang-format allows is split into several `// rl-static: kernel=NAME ...` lines
(a `// key=value` line right after a declaration is rejected as a wrapped one).

Keys of a declaration (values never contain spaces; lists are comma-separated):
  kernel=NAME      required.  NAME matches an entry function whose demangled
                   name (c++filt) contains NAME as a whole identifier (the
                   function, a namespace or a template argument): kernel=copy_vec4
                   matches rl::copy_vec4(float4 const*, ...) but not copy_vec4_tail.
                   A NAME with glob characters (* ? [) is matched with fnmatch
                   against the whole mangled or demangled name instead.
  arch=LIST        architectures the declaration applies to (default all).  `90`
                   matches the 90 and 90a builds; `90a` only the 90a build.
  min_arch=N       applies to architectures >= N only (e.g. 89 for fp8).
  max_regs=N       registers per thread <= N.
  max_smem=N       static shared memory bytes <= N (dynamic shared memory is a
                   launch parameter and not in the report).
  spills=N         spill stores + spill loads <= N bytes (default 0).
  stack=N          stack frame / local memory bytes <= N (default 0).
  sass=LIST        each opcode must appear in the function's SASS.
  sass_absent=LIST no opcode may appear.  LDL and STL (local memory) are absent
                   by default unless a declaration allows stack or spills.
  sass_dominant=OP OP is the most frequent arithmetic opcode of the function
                   (see ARITHMETIC_OPCODES); for FMA/tensor throughput loops.
  loop_share=OP:PCT
                   the function's hot loop is at least PCT percent OP
                   instructions (every instruction of the loop body counts:
                   branches, compares and counters are the loop's overhead;
                   NOPs do not: ptxas pads a slow pipe's instructions with
                   them, e.g. four after each DFMA on sm_120, pacing that the
                   loop could not lose).
                   A loop is a backward BRA and the instructions from its
                   target to it; the hot loop is the one with the most OP
                   (ties: the shortest).  For throughput loops whose overhead
                   must stay below 100 - PCT percent of issue slots.
  loop_ratio=OPA/OPB<=R   (or >=R, ==R)
                   in the function's hot loop for OPB (the loop with the most
                   OPB, ties: the shortest; NOPs left out, as for loop_share),
                   the count of OPA divided by the count of OPB is at most
                   (at least, exactly) R, a number or a fraction: 4/64, 0.0625.
                   For the loads per FMA a kernel's header states, e.g.
                   loop_ratio=LDS/FFMA<=4/64; counts are of the loop's code,
                   both sides of a branch included.  OPA = * counts every
                   instruction of the loop (NOPs left out): the issue cost
                   per OPB, e.g. loop_ratio=*/HMMA<=5 for a tensor-core loop.
  max_loop_instructions_per_store=N
                   the function's longest loop (the most instructions from
                   a backward BRA's target to it) has at most N instructions
                   per global store (STG) in it: a streaming kernel's issue
                   cost per stored vector, whatever nvcc's unrolling; the
                   kernel's header divides it by the elements a store writes.

Opcodes match by prefix at a '.' boundary, modifiers included: LDG.E.128
matches LDG.E.128.CONSTANT, HMMA matches HMMA.16816.F32.BF16, LDG matches all
global loads; LDG.E.12 matches nothing.

Declarations are read from the source and from the project headers it
includes (as nvcc's dependency file <stem>.d lists them), so a kernel
defined in a shared header is declared in that header.

Rules:
  * every entry function must be covered, on every architecture, by at least one
    declaration that applies to it; an undeclared kernel fails (that is how
    budgets stay declared);
  * among the declarations covering a kernel on an architecture, at least one
    must state max_regs and one max_smem;
  * all covering declarations are checked (a budget stated twice must hold twice);
  * a declaration in the source that applies to an architecture but matches no
    entry function there fails (a renamed kernel must not leave a stale budget
    behind); a header's declarations need not match in every includer.

Exit status of `check`: 0 all checks passed; 1 a check failed or the input is
malformed; 77 the resource checks passed but SASS expectations could not be
checked because there is no SASS (cuobjdump missing) -- ctest reports it as
skipped, never as passed.

The build step that produces these files is capture_static.py (kept apart so
that editing the checker does not recompile every kernel).

Standard library only (Python >= 3.8).
"""

import argparse
import fnmatch
import fractions
import os
import re
import shutil
import subprocess
import sys

EXIT_SKIP = 77

# Opcodes that do arithmetic (FP, integer ALU, tensor, special function), as
# opposed to data movement, control flow and predicates.  sass_dominant compares
# only these, so an FMA loop is judged against the address arithmetic and
# conversions around it, not against its loads or branches.
ARITHMETIC_OPCODES = frozenset("""
    FFMA FADD FMUL FMNMX FSEL FSET FSETP FCHK FRND F2F F2I I2F F2FP
    DFMA DADD DMUL DMNMX DSETP
    HFMA2 HADD2 HMUL2 HMNMX2 HSETP2 HSET2
    HMMA IMMA DMMA BMMA HGMMA IGMMA QGMMA BGMMA UTCHMMA UTCQMMA UTCIMMA
    MUFU IMAD IMADSP IMUL IADD IADD3 IABS IMNMX VIMNMX ISETP LEA LOP LOP3 SHF SHL SHR
    POPC FLO BREV PRMT SGXT BMSK IDP IDP4A IDP2A
""".split())

KEYS_INT = ("min_arch", "max_regs", "max_smem", "spills", "stack",
            "max_loop_instructions_per_store")
KEYS_LIST = ("arch", "sass", "sass_absent")
KEYS_STR = ("kernel", "sass_dominant", "loop_share", "loop_ratio")
DECL_RE = re.compile(r"//\s*rl-static:(.*)$")


class InputError(Exception):
    """Malformed declaration or build output: reported as one line, exit 1."""


# --- declarations ----------------------------------------------------------------------------


class Declaration:
    def __init__(self, where, fields, from_header=False):
        self.where = where  # "file:line"
        self.from_header = from_header
        self.fields = fields
        self.kernel = fields["kernel"]
        self.arch = fields.get("arch", ["all"])
        self.min_arch = fields.get("min_arch")

    def applies_to(self, arch):
        if self.min_arch is not None and arch_number(arch) < self.min_arch:
            return False
        if "all" in self.arch:
            return True
        return any(a == arch or (a.isdigit() and int(a) == arch_number(arch)) for a in self.arch)

    def matches(self, mangled, demangled=None):
        if any(c in self.kernel for c in "*?["):
            return fnmatch.fnmatchcase(mangled, self.kernel) or (
                demangled is not None and fnmatch.fnmatchcase(demangled, self.kernel))
        if demangled is not None and demangled != mangled:
            word = r"(?<![A-Za-z0-9_])" + re.escape(self.kernel) + r"(?![A-Za-z0-9_])"
            return re.search(word, demangled) is not None
        # No demangler: Itanium mangling writes each identifier as
        # <length><name>, so the length keeps `copy` from matching `copy_vec4`.
        return re.search(str(len(self.kernel)) + re.escape(self.kernel), mangled) is not None

    def __str__(self):
        return "%s (kernel=%s)" % (self.where, self.kernel)


def arch_number(arch):
    digits = re.match(r"\d+", arch)
    if not digits:
        raise InputError("bad architecture '%s' (expected e.g. 80 or 90a)" % arch)
    return int(digits.group(0))


def parse_declaration(text, where, from_header=False):
    fields = {}
    for token in text.split():
        key, sep, value = token.partition("=")
        if not sep or not value:
            raise InputError("%s: rl-static: expected key=value, got '%s'" % (where, token))
        if key in fields:
            raise InputError("%s: rl-static: key '%s' given twice" % (where, key))
        if key in KEYS_INT:
            if not value.isdigit():
                raise InputError("%s: rl-static: %s needs a number, got '%s'" % (where, key, value))
            fields[key] = int(value)
        elif key in KEYS_LIST:
            fields[key] = [v for v in value.split(",") if v]
        elif key in KEYS_STR:
            fields[key] = value
        else:
            known = ", ".join(KEYS_STR + KEYS_INT + KEYS_LIST)
            raise InputError("%s: rl-static: unknown key '%s' (known: %s)" % (where, key, known))
    if "kernel" not in fields:
        raise InputError("%s: rl-static: declaration without kernel=" % where)
    if "loop_share" in fields:
        op, sep, pct = fields["loop_share"].partition(":")
        if not op or not sep or not re.fullmatch(r"\d+(\.\d+)?", pct) or float(pct) > 100:
            raise InputError("%s: rl-static: loop_share needs OP:PERCENT (e.g. FFMA:99), got '%s'"
                             % (where, fields["loop_share"]))
        fields["loop_share"] = (op, float(pct))
    if "loop_ratio" in fields:
        fields["loop_ratio"] = parse_loop_ratio(fields["loop_ratio"], where)
    return Declaration(where, fields, from_header)


LOOP_RATIO_RE = re.compile(r"([A-Za-z0-9_.]+|\*)/([A-Za-z0-9_.]+)(<=|>=|==)(\d+(?:\.\d+)?(?:/\d+)?)")


def parse_loop_ratio(text, where):
    """loop_ratio=OPA/OPB<=R -> (OPA, OPB, relation, R as a Fraction, R as written)."""
    found = LOOP_RATIO_RE.fullmatch(text)
    if not found or found.group(4).endswith("/0"):
        raise InputError("%s: rl-static: loop_ratio needs OPA/OPB<=R, >=R or ==R with R a number "
                         "or fraction (e.g. LDS/FFMA<=4/64), got '%s'" % (where, text))
    numerator, denominator, relation, bound = found.groups()
    return numerator, denominator, relation, fractions.Fraction(bound), bound


def looks_like_wrapped_declaration(line):
    """A `// key=value ...` comment: the tail of a declaration split by a formatter."""
    comment = re.match(r"\s*//(.*)$", line)
    tokens = comment.group(1).split() if comment else []
    return bool(tokens) and all(t.partition("=")[0] in KEYS_INT + KEYS_LIST + KEYS_STR
                                and "=" in t for t in tokens)


def read_declarations(source_path, from_header=False):
    decls = []
    previous_was_declaration = False
    with open(source_path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            where = "%s:%d" % (os.path.relpath(source_path), number)
            found = DECL_RE.search(line)
            if found:
                decls.append(parse_declaration(found.group(1), where, from_header))
            elif previous_was_declaration and looks_like_wrapped_declaration(line):
                raise InputError("%s: rl-static: this line continues the declaration above "
                                 "(wrapped by clang-format?); give it its own "
                                 "'// rl-static: kernel=...' prefix" % where)
            previous_was_declaration = bool(found)
    return decls


def project_headers(depfile_paths, root):
    """Headers of the project (not the toolkit, not a build tree) that nvcc's
    dependency files list: kernels defined in a shared header are declared there."""
    root = os.path.realpath(root)
    headers = set()
    for path in depfile_paths:
        if not os.path.exists(path):
            continue
        text = read_text(path).replace("\\\n", " ")
        for dep in text.partition(": ")[2].split():
            real = os.path.realpath(dep)
            rel = os.path.relpath(real, root)
            if rel.startswith("..") or rel.split(os.sep)[0] in ("build", ".venv"):
                continue
            if real.endswith((".h", ".hpp", ".cuh", ".inl")):
                headers.add(real)
    return sorted(headers)


# --- ptxas report ------------------------------------------------------------------------------


class Resources:
    def __init__(self, name):
        self.name = name
        self.registers = None
        self.smem = 0
        self.stack = 0
        self.spill_stores = 0
        self.spill_loads = 0

    @property
    def spills(self):
        return self.spill_stores + self.spill_loads


def _bytes(pattern, text):
    found = re.search(r"(\d+) bytes " + pattern, text)
    return int(found.group(1)) if found else 0


def parse_ptxas(text):
    """Entry functions of one `-Xptxas -v` report, by mangled name."""
    entries = {}
    current = None
    properties_of = None
    for line in text.splitlines():
        entry = re.search(r"Compiling entry function '([^']+)'", line)
        if entry:
            current = entries.setdefault(entry.group(1), Resources(entry.group(1)))
            continue
        props = re.search(r"Function properties for (\S+)", line)
        if props:
            # Non-inlined device functions get properties too; their stack is
            # in the caller's "cumulative stack size".
            properties_of = entries.get(props.group(1))
            continue
        if "bytes stack frame" in line:
            if properties_of is not None:
                properties_of.stack = max(properties_of.stack, _bytes("stack frame", line))
                properties_of.spill_stores = _bytes("spill stores", line)
                properties_of.spill_loads = _bytes("spill loads", line)
            properties_of = None
            continue
        used = re.search(r"Used (\d+) registers", line)
        if used and current is not None:
            current.registers = int(used.group(1))
            current.smem = _bytes("smem", line)
            # Older ptxas print "bytes lmem"; newer ones a cumulative stack size
            # that includes called device functions.  Both are local memory.
            current.stack = max(current.stack, _bytes("lmem", line),
                                _bytes("cumulative stack size", line))
            current = None
    for res in entries.values():
        if res.registers is None:
            raise InputError("ptxas report has no 'Used N registers' line for %s" % res.name)
    return entries


# --- SASS --------------------------------------------------------------------------------------

# Modifiers may hold lower case (HGMMA.64x8x16.F32.BF16); NOP; has no space.
SASS_INSTR_RE = re.compile(
    r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][^\s;]*)([^;]*)")


class Instruction(str):
    """An opcode (with modifiers), as a string, with its address and, for a
    branch, its target address (None otherwise)."""

    def __new__(cls, opcode, address=0, target=None):
        obj = str.__new__(cls, opcode)
        obj.address = address
        obj.target = target
        return obj


def parse_sass(text):
    """Instructions per function of a `cuobjdump -sass` listing."""
    functions = {}
    current = None
    for line in text.splitlines():
        header = re.match(r"\s*Function : (\S+)", line)
        if header:
            current = functions.setdefault(header.group(1), [])
            continue
        instr = SASS_INSTR_RE.match(line)
        if instr and current is not None:
            opcode, operands = instr.group(2), instr.group(3)
            target = None
            if base_opcode(opcode) == "BRA":
                address = re.search(r"0x([0-9a-f]+)", operands)
                target = int(address.group(1), 16) if address else None
            current.append(Instruction(opcode, int(instr.group(1), 16), target))
    return functions


def loops(instructions):
    """The body of every loop: a backward branch and the instructions from
    its target to it."""
    bodies = []
    for end, branch in enumerate(instructions):
        target = getattr(branch, "target", None)
        if target is not None and target <= branch.address:
            bodies.append([op for op in instructions[:end + 1] if op.address >= target])
    return bodies


def hot_loop_body(instructions, wanted):
    """The body of the loop with the most `wanted` instructions (ties: the
    shortest body), or None without a backward branch."""
    best, best_key = None, None
    for body in loops(instructions):
        key = (count_matching(body, wanted), -len(body))
        if best_key is None or key > best_key:
            best, best_key = body, key
    return best


def hot_loop(instructions, wanted):
    """(count of `wanted`, body length) of the loop with the most `wanted`
    instructions (ties: the shortest body), or None without a backward branch.
    A loop is a backward branch and the instructions from its target to it."""
    body = hot_loop_body(instructions, wanted)
    return None if body is None else (count_matching(body, wanted), len(body))


def count_matching(instructions, pattern):
    return sum(1 for op in instructions if opcode_matches(op, pattern))


def opcode_matches(opcode, pattern):
    return opcode == pattern or opcode.startswith(pattern + ".")


def base_opcode(opcode):
    return opcode.split(".", 1)[0]


def arithmetic_histogram(opcodes):
    counts = {}
    for op in opcodes:
        base = base_opcode(op)
        if base in ARITHMETIC_OPCODES:
            counts[base] = counts.get(base, 0) + 1
    return counts


# --- the check ---------------------------------------------------------------------------------


def demangle(names):
    tool = shutil.which("c++filt")
    if not tool or not names:
        return {n: n for n in names}
    out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True)
    lines = out.stdout.splitlines()
    return dict(zip(names, lines)) if out.returncode == 0 and len(lines) == len(names) else {
        n: n for n in names}


def check_arch(arch, decls, resources, sass, failures, notes):
    """Checks every entry function of one architecture; returns whether SASS was needed."""
    applicable = [d for d in decls if d.applies_to(arch)]
    pretty = demangle(sorted(resources))
    sass_needed = False
    for decl in applicable:
        # A header's declaration serves every source that instantiates its
        # kernel; only the source's own declarations must match something here.
        if not decl.from_header and not any(decl.matches(n, pretty[n]) for n in resources):
            failures.append("sm_%s: declaration %s matches no kernel (kernels here: %s)"
                            % (arch, decl, ", ".join(sorted(pretty.values())) or "none"))
    for name in sorted(resources):
        res = resources[name]
        label = "sm_%s %s" % (arch, pretty[name])
        covering = [d for d in applicable if d.matches(name, pretty[name])]
        if not covering:
            failures.append("%s: undeclared kernel (mangled %s); add a line "
                            "'// rl-static: kernel=%s max_regs=N max_smem=N' next to it "
                            "(tests/static/README.md)"
                            % (label, name, kernel_identifier(pretty[name])))
            continue
        stated = lambda key: [(d, d.fields[key]) for d in covering if key in d.fields]
        for key, what in (("max_regs", "register"), ("max_smem", "shared memory")):
            if not stated(key):
                failures.append("%s: no %s budget (%s= in %s)"
                                % (label, what, key, ", ".join(d.where for d in covering)))
        measured = {"max_regs": res.registers, "max_smem": res.smem, "spills": res.spills,
                    "stack": res.stack}
        defaults = {"spills": 0, "stack": 0}
        for key, value in measured.items():
            limits = stated(key) or ([(None, defaults[key])] if key in defaults else [])
            for decl, limit in limits:
                if value > limit:
                    origin = decl.where if decl else "default"
                    failures.append("%s: %s = %d exceeds %d (%s)"
                                    % (label, key_description(key, res), value, limit, origin))
        notes.append("%s: %d registers, %d B smem, %d B spilled, %d B stack"
                     % (label, res.registers, res.smem, res.spills, res.stack))

        local_allowed = bool(stated("stack") and max(v for _, v in stated("stack")) > 0) or bool(
            stated("spills") and max(v for _, v in stated("spills")) > 0)
        wants_sass = any(k in d.fields for d in covering
                         for k in ("sass", "sass_absent", "sass_dominant", "loop_share",
                                   "loop_ratio", "max_loop_instructions_per_store"))
        if sass is None:
            sass_needed = sass_needed or wants_sass
            continue
        if name not in sass:
            failures.append("%s: not found in the SASS listing" % label)
            continue
        opcodes = sass[name]
        check_sass(label, covering, opcodes, local_allowed, failures)
    return sass_needed


def kernel_identifier(demangled):
    """The function's own name in a demangled signature, for a suggested kernel=."""
    name = demangled
    if name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i]
                break
    while name.endswith(">"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {">": 1, "<": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i]
                break
    name = name.split("::")[-1].split()[-1] if name.strip() else demangled
    return name if re.fullmatch(r"[A-Za-z_]\w*", name) else "<name>"


def key_description(key, res):
    if key == "spills":
        return "spills (%d B stores + %d B loads)" % (res.spill_stores, res.spill_loads)
    return {"max_regs": "registers", "max_smem": "static shared memory bytes",
            "stack": "stack frame / local memory bytes"}[key]


def check_sass(label, covering, opcodes, local_allowed, failures):
    absent_default = [] if local_allowed else [(None, "LDL"), (None, "STL")]
    for decl in covering:
        for pattern in decl.fields.get("sass", []):
            if not any(opcode_matches(op, pattern) for op in opcodes):
                near = sorted({op for op in opcodes
                               if base_opcode(op) == base_opcode(pattern)})
                failures.append("%s: SASS lacks %s (%s); same base opcode seen: %s"
                                % (label, pattern, decl.where, ", ".join(near) or "none"))
    absent = absent_default + [(d, p) for d in covering for p in d.fields.get("sass_absent", [])]
    for decl, pattern in absent:
        seen = sorted({op for op in opcodes if opcode_matches(op, pattern)})
        if seen:
            origin = decl.where if decl else "default: no local memory unless stack/spills declared"
            failures.append("%s: SASS has %s, which must be absent (%s)"
                            % (label, ", ".join(seen), origin))
    for decl in covering:
        wanted = decl.fields.get("sass_dominant")
        if not wanted:
            continue
        counts = arithmetic_histogram(opcodes)
        if base_opcode(wanted) not in ARITHMETIC_OPCODES:
            failures.append("%s: sass_dominant=%s is not an arithmetic opcode (%s)"
                            % (label, wanted, decl.where))
            continue
        mine = sum(1 for op in opcodes if opcode_matches(op, wanted))
        others = {op: n for op, n in counts.items() if op != base_opcode(wanted)}
        top = max(others.items(), key=lambda kv: kv[1], default=(None, 0))
        if mine == 0 or mine < top[1]:
            ranked = sorted(counts.items(), key=lambda kv: -kv[1])[:6]
            failures.append("%s: %s is not the dominant arithmetic opcode (%d of it; %s) (%s)"
                            % (label, wanted, mine,
                               ", ".join("%s %d" % kv for kv in ranked), decl.where))
    for decl in covering:
        if "loop_share" not in decl.fields:
            continue
        wanted, percent = decl.fields["loop_share"]
        loop = hot_loop([op for op in opcodes if base_opcode(op) != "NOP"], wanted)
        if loop is None or loop[0] == 0:
            failures.append("%s: no loop with %s (loop_share=%s:%g, %s)"
                            % (label, wanted, wanted, percent, decl.where))
        elif 100.0 * loop[0] < percent * loop[1]:
            failures.append("%s: hot loop is %d %s in %d instructions (%.1f%%), below "
                            "loop_share=%s:%g (%s)"
                            % (label, loop[0], wanted, loop[1], 100.0 * loop[0] / loop[1],
                               wanted, percent, decl.where))
    for decl in covering:
        if "loop_ratio" in decl.fields:
            check_loop_ratio(label, decl, opcodes, failures)
    for decl in covering:
        limit = decl.fields.get("max_loop_instructions_per_store")
        if limit is None:
            continue
        longest = max(loops(opcodes), key=len, default=[])
        stores = sum(1 for op in longest if opcode_matches(op, "STG"))
        if stores == 0:
            failures.append("%s: no global store in the longest loop (%d instructions) for "
                            "max_loop_instructions_per_store (%s)"
                            % (label, len(longest), decl.where))
        elif len(longest) > limit * stores:
            failures.append("%s: longest loop has %d instructions for %d stores (%.1f a store), "
                            "above max_loop_instructions_per_store=%d (%s)"
                            % (label, len(longest), stores, len(longest) / stores, limit,
                               decl.where))


def check_loop_ratio(label, decl, opcodes, failures):
    numerator, denominator, relation, bound, spelled = decl.fields["loop_ratio"]
    stated = "loop_ratio=%s/%s%s%s" % (numerator, denominator, relation, spelled)
    body = hot_loop_body([op for op in opcodes if base_opcode(op) != "NOP"], denominator)
    below = count_matching(body or [], denominator)
    if below == 0:
        failures.append("%s: no loop with %s (%s, %s)" % (label, denominator, stated, decl.where))
        return
    above = len(body) if numerator == "*" else count_matching(body, numerator)
    ratio = fractions.Fraction(above, below)
    holds = {"<=": ratio <= bound, ">=": ratio >= bound, "==": ratio == bound}[relation]
    if not holds:
        failures.append("%s: hot loop (the one with the most %s) has %d %s for %d %s (%.4g), "
                        "not %s %s: %s (%s)"
                        % (label, denominator, above,
                           "instructions" if numerator == "*" else numerator, below, denominator,
                           float(ratio), relation, spelled, stated, decl.where))


def read_text(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def cmd_check(args):
    decls = read_declarations(args.source)
    depfiles = [os.path.join(args.dir, "%s.d" % args.stem)]
    for header in project_headers(depfiles, args.root):
        decls += read_declarations(header, from_header=True)
    failures, notes = [], []
    sass_missing = []
    for arch in args.arch:
        prefix = os.path.join(args.dir, "%s.sm_%s" % (args.stem, arch))
        ptxas_path = prefix + ".ptxas.txt"
        if not os.path.exists(ptxas_path):
            raise InputError("missing %s (is the static build part of the build?)" % ptxas_path)
        resources = parse_ptxas(read_text(ptxas_path))
        sass = None
        if os.path.exists(prefix + ".sass"):
            sass = parse_sass(read_text(prefix + ".sass"))
        if check_arch(arch, decls, resources, sass, failures, notes):
            sass_missing.append(arch)
    for line in notes:
        print("  " + line)
    if failures:
        print("FAILED %s: %d problem(s)" % (args.source, len(failures)))
        for line in failures:
            print("  " + line)
        return 1
    if sass_missing:
        print("SKIPPED SASS checks of %s for sm_%s: no SASS listing (cuobjdump not found; run "
              "scripts/static_tools and reconfigure). Resource budgets passed."
              % (args.source, ",sm_".join(sass_missing)))
        return EXIT_SKIP
    print("passed %s on sm_%s" % (args.source, ",sm_".join(args.arch)))
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="check one kernel source against its declarations")
    check.add_argument("--source", required=True, help="the kernel source (.cu)")
    check.add_argument("--dir", required=True, help="folder with <stem>.sm_<arch>.* outputs")
    check.add_argument("--stem", required=True, help="output name stem")
    check.add_argument("--arch", required=True, action="append",
                       help="architecture as in CMAKE_CUDA_ARCHITECTURES (repeat)")
    check.add_argument("--root", default=os.getcwd(),
                       help="project root: its headers listed in <stem>.d may "
                            "declare kernels too (default: the current directory)")
    args = parser.parse_args(argv)
    try:
        return cmd_check(args)
    except (InputError, OSError) as err:
        print("check_static: %s" % err, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
