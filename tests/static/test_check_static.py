#!/usr/bin/env python3
"""Tests of check_static.py: its parsers and rules on recorded listings, and,
with --fixture-dir, its verdicts on the fixture kernels compiled for every
architecture (tests/static/fixtures/*.cu): the bad ones must fail, each for
the reason it was written to show.

Exit 77 (ctest: skipped) when a test could not run because no SASS listing
was built (cuobjdump missing); 1 when any test failed.
"""

import argparse
import contextlib
import io
import os
import sys
import tempfile
import textwrap
import unittest

import capture_static  # beside this file: the script's folder is on sys.path
import check_static as cs

HERE = os.path.dirname(os.path.abspath(__file__))

FIXTURE_DIR = None
ARCHS = []

# Recorded from nvcc 13.0 (-Xptxas -v, sm_80) on tests/static/fixtures/bad_spills.cu
# and good_vector_copy.cu; trimmed.
PTXAS_REPORT = textwrap.dedent("""\
    ptxas info    : 0 bytes gmem
    ptxas info    : Compiling entry function '_ZN2rl14static_fixture17register_pressureEPKfPfi' for 'sm_80'
    ptxas info    : Function properties for _ZN2rl14static_fixture17register_pressureEPKfPfi
        1088 bytes stack frame, 1368 bytes spill stores, 1720 bytes spill loads
    ptxas info    : Used 32 registers, used 0 barriers, 372 bytes cmem[0]
    ptxas info    : Compile time = 80.1 ms
    ptxas info    : Function properties for _Z6helperv
        16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Compiling entry function '_ZN2rl14static_fixture17reverse_in_sharedEPf' for 'sm_80'
    ptxas info    : Function properties for _ZN2rl14static_fixture17reverse_in_sharedEPf
        0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 10 registers, used 1 barriers, 4096 bytes smem, 360 bytes cmem[0]
    ptxas info    : Compiling entry function '_Z6callerPf' for 'sm_80'
    ptxas info    : Function properties for _Z6callerPf
        0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 20 registers, used 0 barriers, 16 bytes cumulative stack size, 360 bytes cmem[0]
    ptxas info    : Compiling entry function '_Z9old_ptxasPf' for 'sm_80'
    ptxas info    : Used 12 registers, 8 bytes lmem, 360 bytes cmem[0]
""")

# Recorded from cuobjdump 13.5 -sass (sm_90a); encodings trimmed.
SASS_LISTING = textwrap.dedent("""\
    \tcode for sm_90a
    \t\tFunction : _Z9copy_vec4PK6float4PS_i
    \t.headerflags\t@"EF_CUDA_ACCELERATORS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
            /*0000*/                   LDC R1, c[0x0][0x28] ;             /* 0x00000a00ff017b82 */
            /*0070*/               @P0 EXIT ;                             /* 0x000000000000094d */
            /*00c0*/                   LDG.E.128.CONSTANT R8, desc[UR4][R2.64] ;
            /*00f0*/                   FADD R0, R0, R0 ;
            /*0110*/                   STG.E.128 desc[UR4][R4.64], R8 ;
            /*0120*/                   EXIT ;
            /*0130*/                   BRA 0x130;
    \t\t..........
    \t\tFunction : _Z8fma_loopPfffi
            /*0170*/                   FFMA R4, R4, R3.reuse, c[0x0][0x16c] ;
            /*0180*/              @!P1 FFMA R6, R6, R3.reuse, c[0x0][0x16c] ;
            /*0190*/                   FFMA R8, R8, R3.reuse, c[0x0][0x16c] ;
            /*01a0*/                   IMAD.IADD R9, R9, 0x1, R2 ;
            /*01b0*/                   HMMA.16816.F32.BF16 R12, R4, R8, R12 ;
            /*01c0*/                   HGMMA.64x8x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0 ;
            /*01d0*/                   NOP;
""")


def decl(text):
    return cs.parse_declaration(text, "test.cu:1")


class Stash:
    """One check run on in-memory inputs, as check_arch sees them."""

    def __init__(self, decl_lines, ptxas=PTXAS_REPORT, sass=SASS_LISTING, arch="80"):
        decls = [decl(line) for line in decl_lines]
        self.failures, self.notes = [], []
        sass_functions = cs.parse_sass(sass) if sass is not None else None
        self.sass_needed = cs.check_arch(arch, decls, cs.parse_ptxas(ptxas), sass_functions,
                                         self.failures, self.notes)

    def failed_with(self, *fragments):
        return any(all(f in line for f in fragments) for line in self.failures)


class PtxasReportParsing(unittest.TestCase):
    def test_reads_registers_smem_spills_and_stack_per_entry(self):
        entries = cs.parse_ptxas(PTXAS_REPORT)
        spill = entries["_ZN2rl14static_fixture17register_pressureEPKfPfi"]
        self.assertEqual((spill.registers, spill.stack, spill.spill_stores, spill.spill_loads),
                         (32, 1088, 1368, 1720))
        shared = entries["_ZN2rl14static_fixture17reverse_in_sharedEPf"]
        self.assertEqual((shared.registers, shared.smem, shared.spills), (10, 4096, 0))

    def test_device_functions_are_not_entries(self):
        self.assertNotIn("_Z6helperv", cs.parse_ptxas(PTXAS_REPORT))

    def test_called_functions_stack_counts_through_cumulative_stack(self):
        self.assertEqual(cs.parse_ptxas(PTXAS_REPORT)["_Z6callerPf"].stack, 16)

    def test_old_ptxas_lmem_counts_as_stack(self):
        self.assertEqual(cs.parse_ptxas(PTXAS_REPORT)["_Z9old_ptxasPf"].stack, 8)

    def test_entry_without_register_line_is_an_input_error(self):
        with self.assertRaises(cs.InputError):
            cs.parse_ptxas("ptxas info    : Compiling entry function '_Z1kv' for 'sm_80'\n")


class SassParsing(unittest.TestCase):
    def test_opcodes_per_function_with_modifiers_and_predicates(self):
        functions = cs.parse_sass(SASS_LISTING)
        self.assertEqual(functions["_Z9copy_vec4PK6float4PS_i"],
                         ["LDC", "EXIT", "LDG.E.128.CONSTANT", "FADD", "STG.E.128", "EXIT", "BRA"])
        self.assertEqual(functions["_Z8fma_loopPfffi"].count("FFMA"), 3)
        self.assertEqual(functions["_Z8fma_loopPfffi"][-2:], ["HGMMA.64x8x16.F32.BF16", "NOP"])

    def test_opcode_prefix_matches_at_dot_boundary_only(self):
        self.assertTrue(cs.opcode_matches("LDG.E.128.CONSTANT", "LDG.E.128"))
        self.assertTrue(cs.opcode_matches("HMMA.16816.F32.BF16", "HMMA"))
        self.assertTrue(cs.opcode_matches("LDG.E.128", "LDG.E.128"))
        self.assertFalse(cs.opcode_matches("LDG.E.128", "LDG.E.12"))
        self.assertFalse(cs.opcode_matches("LDGSTS.E", "LDG"))


class Declarations(unittest.TestCase):
    def test_parses_numbers_lists_and_strings(self):
        d = decl("kernel=k max_regs=40 sass=LDG.E.128,STG.E.128 arch=80,90a sass_dominant=FFMA")
        self.assertEqual(d.fields["max_regs"], 40)
        self.assertEqual(d.fields["sass"], ["LDG.E.128", "STG.E.128"])
        self.assertEqual(d.fields["sass_dominant"], "FFMA")

    def test_rejects_unknown_key_missing_kernel_bad_number_and_repeats(self):
        for text in ("kernel=k max_reg=40", "max_regs=40", "kernel=k max_regs=forty",
                     "kernel=k max_regs", "kernel=k max_regs=1 max_regs=2"):
            with self.assertRaises(cs.InputError, msg=text):
                decl(text)

    def test_kernel_matches_whole_identifiers_of_the_demangled_name(self):
        d = decl("kernel=copy")
        self.assertFalse(d.matches("_Z9copy_vec4PK6float4PS_i", "copy_vec4(float4 const*)"))
        d = decl("kernel=copy_vec4")
        self.assertTrue(d.matches("_Z9copy_vec4PK6float4PS_i", "copy_vec4(float4 const*)"))
        self.assertTrue(d.matches("x", "rl::gelu::copy_vec4<float, (rl::Form)0>(float*)"))
        self.assertFalse(d.matches("x", "rl::copy_vec4_tail(float*)"))

    def test_kernel_in_an_anonymous_namespace_matches(self):
        # The anonymous namespace's id ends in digits right before "11gelu_vec128".
        mangled = ("_ZN2rl4gelu53_GLOBAL__N__fc12c006_14_gelu_vec128_cu_0696c2bc_32725"
                   "11gelu_vec128IfLNS0_4FormE0EEEvPT_PKS4_l")
        pretty = cs.demangle([mangled])[mangled]
        self.assertTrue(decl("kernel=gelu_vec128").matches(mangled, pretty))
        self.assertFalse(decl("kernel=vec128").matches(mangled, pretty))
        self.assertTrue(decl("kernel=gelu").matches(mangled, pretty))  # the namespace

    def test_without_a_demangler_the_mangled_length_prefix_is_used(self):
        self.assertTrue(decl("kernel=copy_vec4").matches("_Z9copy_vec4PK6float4PS_i"))
        self.assertFalse(decl("kernel=copy").matches("_Z9copy_vec4PK6float4PS_i"))

    def test_kernel_glob_matches_the_mangled_or_demangled_name(self):
        self.assertTrue(decl("kernel=*add_oneIf*").matches("_Z7add_oneIfEvPT_"))
        self.assertFalse(decl("kernel=*add_oneId*").matches("_Z7add_oneIfEvPT_"))
        self.assertTrue(decl("kernel=*add_one<float>*").matches(
            "_Z7add_oneIfEvPT_", "void add_one<float>(float*)"))

    def test_arch_and_min_arch_select_architectures(self):
        self.assertTrue(decl("kernel=k arch=90").applies_to("90a"))
        self.assertFalse(decl("kernel=k arch=90a").applies_to("90"))
        self.assertTrue(decl("kernel=k arch=90a").applies_to("90a"))
        self.assertFalse(decl("kernel=k arch=80,86").applies_to("89"))
        self.assertFalse(decl("kernel=k min_arch=89").applies_to("86"))
        self.assertTrue(decl("kernel=k min_arch=89").applies_to("90a"))

    def test_rejects_a_declaration_wrapped_by_a_formatter(self):
        with tempfile.NamedTemporaryFile("w", suffix=".cu", delete=False) as f:
            f.write("// rl-static: kernel=a max_regs=1 max_smem=0 sass=LDG.E.128\n"
                    "// sass_absent=LDL\n")
        try:
            with self.assertRaisesRegex(cs.InputError, "continues the declaration"):
                cs.read_declarations(f.name)
        finally:
            os.unlink(f.name)

    def test_reads_declarations_from_comment_lines(self):
        with tempfile.NamedTemporaryFile("w", suffix=".cu", delete=False) as f:
            f.write("// idea\n//rl-static: kernel=a max_regs=1\n__global__ void a() {}\n"
                    "  // rl-static: kernel=b max_smem=0\n")
        try:
            self.assertEqual([d.kernel for d in cs.read_declarations(f.name)], ["a", "b"])
        finally:
            os.unlink(f.name)


class HeaderDeclarations(unittest.TestCase):
    def test_project_headers_come_from_the_dependency_file(self):
        with tempfile.TemporaryDirectory() as root:
            for rel in ("kernels/x/common.hpp", "build/default/gen.hpp", "kernels/x/k.cu"):
                os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
                open(os.path.join(root, rel), "w").close()
            dep = os.path.join(root, "k.sm_80.d")
            with open(dep, "w") as f:
                f.write("%s/k.sm_80.cubin : %s/kernels/x/k.cu \\\n    /usr/include/stdio.h \\\n"
                        "    %s/kernels/x/common.hpp %s/build/default/gen.hpp\n"
                        % (root, root, root, root))
            headers = cs.project_headers([dep, os.path.join(root, "missing.d")], root)
            wanted = os.path.realpath(os.path.join(root, "kernels/x/common.hpp"))
            self.assertEqual(headers, [wanted])

    def test_header_declaration_need_not_match_in_every_includer(self):
        header_decl = cs.parse_declaration("kernel=fill_pattern max_regs=16 max_smem=0",
                                           "common.hpp:3", from_header=True)
        failures, notes = [], []
        ptxas = ("ptxas info    : Compiling entry function '_Z1kPf' for 'sm_80'\n"
                 "ptxas info    : Used 8 registers, used 0 barriers\n")
        cs.check_arch("80", [decl("kernel=k max_regs=8 max_smem=0"), header_decl],
                      cs.parse_ptxas(ptxas), None, failures, notes)
        self.assertEqual(failures, [])

    def test_undeclared_kernel_message_suggests_its_name(self):
        self.assertEqual(cs.kernel_identifier(
            "void rl::ceilings::(anonymous namespace)::fma_chains<rl::X<int>>(float, int*)"),
            "fma_chains")
        self.assertEqual(cs.kernel_identifier("rl::demo::scale_f32_vec4(float const*, long)"),
                         "scale_f32_vec4")


class Rules(unittest.TestCase):
    ALL = ("kernel=register_pressure max_regs=32 max_smem=0 spills=4000 stack=2000",
           "kernel=reverse_in_shared max_regs=10 max_smem=4096",
           "kernel=caller max_regs=20 max_smem=0 stack=16",
           "kernel=old_ptxas max_regs=12 max_smem=0 stack=8")

    def test_fully_declared_report_passes(self):
        self.assertEqual(Stash(self.ALL, sass=None).failures, [])

    def test_undeclared_kernel_fails(self):
        s = Stash(self.ALL[1:], sass=None)
        self.assertTrue(s.failed_with("register_pressure", "undeclared kernel"))

    def test_budget_exceeded_fails_with_origin(self):
        s = Stash(("kernel=reverse_in_shared max_regs=9 max_smem=1024",) + self.ALL[:1]
                  + self.ALL[2:], sass=None)
        self.assertTrue(s.failed_with("reverse_in_shared", "registers = 10 exceeds 9", "test.cu:1"))
        self.assertTrue(s.failed_with("reverse_in_shared", "4096 exceeds 1024"))

    def test_spills_and_stack_default_to_zero(self):
        s = Stash(("kernel=register_pressure max_regs=32 max_smem=0",) + self.ALL[1:], sass=None)
        self.assertTrue(s.failed_with("register_pressure", "spills", "3088 exceeds 0", "default"))
        self.assertTrue(s.failed_with("register_pressure", "stack", "1088 exceeds 0"))

    def test_a_budget_is_required(self):
        s = Stash(("kernel=reverse_in_shared max_regs=10",) + self.ALL[:1] + self.ALL[2:],
                  sass=None)
        self.assertTrue(s.failed_with("reverse_in_shared", "no shared memory budget"))

    def test_stale_declaration_fails(self):
        s = Stash(self.ALL + ("kernel=renamed_away max_regs=1 max_smem=0",), sass=None)
        self.assertTrue(s.failed_with("renamed_away", "matches no kernel"))

    def test_declaration_for_another_arch_is_not_stale(self):
        s = Stash(self.ALL + ("kernel=hopper_only arch=90a sass=HGMMA",), sass=None)
        self.assertEqual(s.failures, [])

    def test_sass_expectations_without_listing_ask_for_a_skip(self):
        s = Stash(("kernel=reverse_in_shared max_regs=10 max_smem=4096 sass=LDS",)
                  + self.ALL[:1] + self.ALL[2:], sass=None)
        self.assertTrue(s.sass_needed)
        self.assertEqual(s.failures, [])


class SassRules(unittest.TestCase):
    PTXAS = textwrap.dedent("""\
        ptxas info    : Compiling entry function '_Z9copy_vec4PK6float4PS_i' for 'sm_90a'
        ptxas info    : Used 14 registers, used 0 barriers
        ptxas info    : Compiling entry function '_Z8fma_loopPfffi' for 'sm_90a'
        ptxas info    : Used 17 registers, used 0 barriers
    """)
    FMA = "kernel=fma_loop max_regs=32 max_smem=0"

    def run_rules(self, copy_decl, fma_decl=FMA):
        return Stash((copy_decl, fma_decl), ptxas=self.PTXAS, arch="90a")

    def test_present_and_absent_opcodes(self):
        ok = self.run_rules("kernel=copy_vec4 max_regs=14 max_smem=0 sass=LDG.E.128,STG.E.128 "
                            "sass_absent=LDG.E.64")
        self.assertEqual(ok.failures, [])
        bad = self.run_rules("kernel=copy_vec4 max_regs=14 max_smem=0 sass=HMMA sass_absent=FADD")
        self.assertTrue(bad.failed_with("copy_vec4", "SASS lacks HMMA"))
        self.assertTrue(bad.failed_with("copy_vec4", "FADD", "must be absent"))

    # LayerNorm rung 8 (layernorm_vec128_rows_per_block_streaming) declares the
    # evict-first spellings nvcc 13.0 emits for ld.global.cs.nc / st.global.cs;
    # the same declaration must reject rung 7's plain 128-bit accesses, and its
    # sass_absent=STG.E.128 must not fire on the streaming store.
    def test_streaming_spellings_reject_plain_128_bit_accesses(self):
        self.assertTrue(cs.opcode_matches("LDG.E.EF.128.CONSTANT", "LDG.E.EF.128"))
        self.assertFalse(cs.opcode_matches("STG.E.EF.128", "STG.E.128"))
        self.assertFalse(cs.opcode_matches("LDG.E.EF.128.CONSTANT", "LDG.E.128"))
        plain = self.run_rules("kernel=copy_vec4 max_regs=14 max_smem=0 "
                               "sass=LDG.E.EF.128.CONSTANT,STG.E.EF.128")
        self.assertTrue(plain.failed_with("copy_vec4", "SASS lacks LDG.E.EF.128.CONSTANT"))
        self.assertTrue(plain.failed_with("copy_vec4", "SASS lacks STG.E.EF.128"))

    def test_dominant_arithmetic_opcode(self):
        copy = "kernel=copy_vec4 max_regs=14 max_smem=0"
        self.assertEqual(self.run_rules(copy, self.FMA + " sass_dominant=FFMA").failures, [])
        s = self.run_rules(copy, self.FMA + " sass_dominant=HMMA")
        self.assertTrue(s.failed_with("fma_loop", "HMMA is not the dominant", "FFMA 3"))

    # A kernel with a setup, a hot loop of 99 FFMA + IADD3 + ISETP + BRA
    # (99/102 = 97.1%) and a tail loop of 2 FFMA in 5 instructions.
    @staticmethod
    def loop_listing(hot_fmas=99):
        lines = ["\t\tFunction : _Z8fma_loopPfffi",
                 "        /*0000*/                   MOV R1, c[0x0][0x28] ;"]
        address = 0x10
        def add(text):
            nonlocal address
            lines.append("        /*%04x*/                   %s ;" % (address, text))
            address += 0x10
        hot = address
        for _ in range(hot_fmas):
            add("FFMA R4, R4, R3, R2")
        add("IADD3 R5, R5, -0x4, RZ")
        add("ISETP.GT.AND P0, PT, R5, 0x3, PT")
        lines.append("        /*%04x*/               @P0 BRA 0x%x ;" % (address, hot))
        address += 0x10
        tail = address
        add("FFMA R4, R4, R3, R2")
        add("FFMA R6, R6, R3, R2")
        add("IADD3 R5, R5, -0x1, RZ")
        add("ISETP.NE.AND P1, PT, R5, RZ, PT")
        lines.append("        /*%04x*/               @P1 BRA 0x%x ;" % (address, tail))
        address += 0x10
        add("EXIT")
        lines.append("        /*%04x*/                   BRA 0x%x;" % (address, address))
        return "\n".join(lines) + "\n"

    def test_hot_loop_is_the_backward_branch_with_the_most_of_the_opcode(self):
        code = cs.parse_sass(self.loop_listing())["_Z8fma_loopPfffi"]
        self.assertEqual(code[3].address, 0x30)
        self.assertEqual(cs.hot_loop(code, "FFMA"), (99, 102))
        self.assertEqual(cs.hot_loop(code, "HMMA"), (0, 1))  # the trailing BRA-to-itself
        self.assertIsNone(cs.hot_loop(cs.parse_sass(SASS_LISTING)["_Z9copy_vec4PK6float4PS_i"][:-1],
                                      "FFMA"))

    def test_loop_share_counts_every_instruction_of_the_hot_loop(self):
        ptxas = "ptxas info    : Compiling entry function '_Z8fma_loopPfffi' for 'sm_90a'\n" \
                "ptxas info    : Used 17 registers, used 0 barriers\n"
        run = lambda share, listing: Stash((self.FMA + " loop_share=" + share,), ptxas=ptxas,
                                           sass=listing, arch="90a")
        self.assertEqual(run("FFMA:97", self.loop_listing()).failures, [])
        low = run("FFMA:99", self.loop_listing())
        self.assertTrue(low.failed_with("fma_loop", "hot loop is 99 FFMA in 102 instructions",
                                        "97.1%", "loop_share=FFMA:99"))
        self.assertEqual(run("FFMA:99", self.loop_listing(hot_fmas=297)).failures, [])
        padded = self.loop_listing(hot_fmas=297).replace(
            "FFMA R4, R4, R3, R2 ;", "FFMA R4, R4, R3, R2 ;\n        /*ffff*/ NOP ;")
        self.assertEqual(run("FFMA:99", padded).failures, [], "NOPs are pacing, not overhead")
        none = run("DFMA:99", self.loop_listing())
        self.assertTrue(none.failed_with("fma_loop", "no loop with DFMA"))

    def test_max_loop_instructions_per_store_bounds_the_longest_loop(self):
        ptxas = "ptxas info    : Compiling entry function '_Z8fma_loopPfffi' for 'sm_90a'\n" \
                "ptxas info    : Used 17 registers, used 0 barriers\n"
        # The hot loop with two of its FFMA made stores: 102 instructions, 51 a store.
        listing = self.loop_listing().replace("FFMA R4, R4, R3, R2 ;\n",
                                              "STG.E.128 desc[UR4][R2.64], R8 ;\n", 2)
        run = lambda limit, sass: Stash(
            (self.FMA + " max_loop_instructions_per_store=%d" % limit,), ptxas=ptxas, sass=sass,
            arch="90a")
        self.assertEqual(run(51, listing).failures, [])
        self.assertTrue(run(50, listing).failed_with(
            "fma_loop", "longest loop has 102 instructions for 2 stores (51.0 a store)",
            "max_loop_instructions_per_store=50"))
        self.assertTrue(run(500, self.loop_listing()).failed_with(
            "fma_loop", "no global store in the longest loop"))

    # A K loop as the SIMT GEMM rungs compile it: 64 FFMA, two LDS.128, two
    # LDS and an LDSM (not an LDS: prefixes match at a '.'), one barrier; then
    # a tail loop with more LDS per FFMA (4 for 2), which is not the hot loop.
    @staticmethod
    def k_loop_listing():
        body = (["BAR.SYNC.DEFER_BLOCKING 0x0", "LDS.128 R8, [R2]", "LDS.128 R12, [R2+0x10]",
                 "LDS R16, [R3]", "LDS R17, [R3+0x4]", "LDSM.16.M88.4 R20, [R4]"]
                + ["FFMA R%d, R8, R12, R%d" % (24 + i % 8, 24 + i % 8) for i in range(64)]
                + ["NOP", "ISETP.GT.AND P0, PT, R5, 0x3, PT"])
        tail = ["LDS R16, [R3]"] * 4 + ["FFMA R24, R16, R16, R24"] * 2
        lines = ["\t\tFunction : _Z8fma_loopPfffi"]
        for start, ops in ((0x10, body), (0x10 + 0x10 * (len(body) + 1), tail)):
            for i, text in enumerate(ops):
                lines.append("        /*%04x*/                   %s ;" % (start + 0x10 * i, text))
            lines.append("        /*%04x*/               @P0 BRA 0x%x ;"
                         % (start + 0x10 * len(ops), start))
        return "\n".join(lines) + "\n"

    def test_loop_ratio_counts_opcode_prefixes_in_the_hot_loop(self):
        ptxas = "ptxas info    : Compiling entry function '_Z8fma_loopPfffi' for 'sm_90a'\n" \
                "ptxas info    : Used 17 registers, used 0 barriers\n"
        run = lambda ratio: Stash((self.FMA + " loop_ratio=" + ratio,), ptxas=ptxas,
                                  sass=self.k_loop_listing(), arch="90a")
        for holds in ("LDS/FFMA<=4/64", "LDS/FFMA==1/16", "LDS/FFMA>=0.0625", "LDS.128/FFMA==2/64",
                      "BAR/FFMA==1/64", "LDSM/FFMA<=1/64", "NOP/FFMA==0"):
            self.assertEqual(run(holds).failures, [], holds)
        self.assertTrue(run("LDS/FFMA<=3/64").failed_with(
            "fma_loop", "hot loop (the one with the most FFMA) has 4 LDS for 64 FFMA (0.0625), "
            "not <= 3/64: loop_ratio=LDS/FFMA<=3/64 (test.cu:1)"))
        self.assertTrue(run("LDS.128/FFMA>=3/64").failed_with(
            "has 2 LDS.128 for 64 FFMA", "not >= 3/64"))
        self.assertTrue(run("BAR/FFMA==2/64").failed_with("has 1 BAR for 64 FFMA", "not == 2/64"))
        self.assertTrue(run("HMMA/DFMA<=1").failed_with(
            "fma_loop", "no loop with DFMA (loop_ratio=HMMA/DFMA<=1, test.cu:1)"))

    def test_loop_ratio_star_counts_every_instruction_of_the_hot_loop_but_nops(self):
        ptxas = "ptxas info    : Compiling entry function '_Z8fma_loopPfffi' for 'sm_90a'\n" \
                "ptxas info    : Used 17 registers, used 0 barriers\n"
        run = lambda ratio: Stash((self.FMA + " loop_ratio=" + ratio,), ptxas=ptxas,
                                  sass=self.k_loop_listing(), arch="90a")
        # 6 loads and the barrier, 64 FFMA, the ISETP and the BRA; the NOP left out.
        self.assertEqual(run("*/FFMA==72/64").failures, [])
        self.assertTrue(run("*/FFMA<=71/64").failed_with(
            "fma_loop", "has 72 instructions for 64 FFMA", "not <= 71/64"))

    def test_loop_ratio_needs_two_opcodes_a_relation_and_a_number(self):
        self.assertEqual(decl("kernel=k loop_ratio=LDS.128/FFMA<=4/64").fields["loop_ratio"],
                         ("LDS.128", "FFMA", "<=", cs.fractions.Fraction(1, 16), "4/64"))
        self.assertEqual(decl("kernel=k loop_ratio=LDG/FFMA>=0.25").fields["loop_ratio"][2:4],
                         (">=", cs.fractions.Fraction(1, 4)))
        self.assertEqual(decl("kernel=k loop_ratio=*/HMMA<=5").fields["loop_ratio"][0], "*")
        for text in ("kernel=k loop_ratio=LDS/FFMA", "kernel=k loop_ratio=LDS<=1",
                     "kernel=k loop_ratio=LDS/FFMA<4", "kernel=k loop_ratio=LDS/FFMA<=",
                     "kernel=k loop_ratio=LDS/FFMA<=1/0", "kernel=k loop_ratio=LDS/FFMA<=x",
                     "kernel=k loop_ratio=/FFMA<=1", "kernel=k loop_ratio=LDS/*<=1"):
            with self.assertRaisesRegex(cs.InputError, "loop_ratio needs OPA/OPB", msg=text):
                decl(text)

    def test_loop_share_needs_an_opcode_and_a_percentage(self):
        self.assertEqual(decl("kernel=k loop_share=FFMA:99.5").fields["loop_share"],
                         ("FFMA", 99.5))
        for text in ("kernel=k loop_share=FFMA", "kernel=k loop_share=:99",
                     "kernel=k loop_share=FFMA:lots", "kernel=k loop_share=FFMA:101"):
            with self.assertRaises(cs.InputError, msg=text):
                decl(text)

    def test_local_memory_is_absent_by_default(self):
        listing = SASS_LISTING.replace("FADD R0, R0, R0", "STL [R1], R0")
        s = Stash(("kernel=copy_vec4 max_regs=14 max_smem=0", self.FMA), ptxas=self.PTXAS,
                  sass=listing, arch="90a")
        self.assertTrue(s.failed_with("copy_vec4", "STL", "must be absent"))
        allowed = Stash(("kernel=copy_vec4 max_regs=14 max_smem=0 stack=16", self.FMA),
                        ptxas=self.PTXAS, sass=listing, arch="90a")
        self.assertEqual(allowed.failures, [])


# nvcc -Xptxas -v for two architectures (nvcc 13.0, bad_spills.cu; trimmed), with
# a warning among the report lines.
TWO_ARCH_OUTPUT = textwrap.dedent("""\
    ptxas info    : 0 bytes gmem
    ptxas info    : Compiling entry function '_Z1kPf' for 'sm_80'
    ptxas info    : Function properties for _Z1kPf
        1088 bytes stack frame, 1368 bytes spill stores, 1720 bytes spill loads
    ptxas info    : Used 32 registers, used 0 barriers, 1088 bytes cumulative stack size
    warning: something to read
    ptxas info    : 0 bytes gmem
    ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90a'
    ptxas info    : Function properties for _Z1kPf
        1864 bytes stack frame, 2172 bytes spill stores, 2668 bytes spill loads
    ptxas info    : Used 40 registers, used 0 barriers, 1864 bytes cumulative stack size
    """)


class CaptureStep(unittest.TestCase):
    """capture_static.py, the launcher that keeps each architecture's report."""

    def capture(self, tmp, script, archs="80,90a"):
        source = os.path.join(tmp, "src", "fam", "k.cu")
        os.makedirs(os.path.dirname(source), exist_ok=True)
        open(source, "w").close()
        obj = os.path.join(tmp, "k.o")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = capture_static.main(["--source-root", os.path.join(tmp, "src"), "--out-dir",
                                      os.path.join(tmp, "out"), "--archs", archs, "--",
                                      sys.executable, "-c", script, "-c", source, "-o", obj])
        return rc, os.path.join(tmp, "out", "fam", "k"), err.getvalue()

    def test_each_architecture_gets_its_own_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            script = "import sys; sys.stderr.write(%r)" % TWO_ARCH_OUTPUT
            rc, prefix, err = self.capture(tmp, script)
            self.assertEqual(rc, 0, err)
            self.assertEqual(err.strip(), "warning: something to read")
            for arch, regs, spills in (("80", 32, 1368 + 1720), ("90a", 40, 2172 + 2668)):
                with open(prefix + ".sm_%s.ptxas.txt" % arch) as f:
                    (res,) = cs.parse_ptxas(f.read()).values()
                self.assertEqual((res.registers, res.spills), (regs, spills))

    def test_failed_compile_leaves_no_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            script = "import sys; sys.stderr.write(%r)" % TWO_ARCH_OUTPUT
            rc, prefix, _ = self.capture(tmp, script)
            self.assertTrue(os.path.exists(prefix + ".sm_80.ptxas.txt"))
            rc, prefix, err = self.capture(tmp, "import sys; sys.stderr.write('error: boom'); "
                                                "sys.exit(2)")
            self.assertEqual(rc, 2)
            self.assertIn("error: boom", err)
            self.assertFalse(os.path.exists(prefix + ".sm_80.ptxas.txt"))

    def test_sass_listing_splits_by_architecture(self):
        dump = ("\nFatbin elf code:\n================\narch = sm_80\n\n\tcode for sm_80\n"
                "\t\tFunction : _Z1kPf\n        /*0000*/    FFMA R0, R0, R0, R0 ;\n"
                "\nFatbin ptx code:\n================\narch = sm_80\n"
                "\nFatbin elf code:\n================\narch = sm_90a\n\n\tcode for sm_90a\n"
                "\t\tFunction : _Z1kPf\n        /*0000*/    HMMA.16816.F32 R0, R0, R0, R0 ;\n")
        listings = capture_static.split_sass(dump, ["80", "90a"])
        self.assertEqual(cs.parse_sass("\n".join(listings["80"])), {"_Z1kPf": ["FFMA"]})
        self.assertEqual(cs.parse_sass("\n".join(listings["90a"])),
                         {"_Z1kPf": ["HMMA.16816.F32"]})


class Fixtures(unittest.TestCase):
    """The checker on real nvcc output of tests/static/fixtures/*.cu."""

    def check(self, stem):
        if FIXTURE_DIR is None:
            self.skipTest("no --fixture-dir (no CUDA build)")
        args = ["check", "--source", os.path.join(HERE, "fixtures", stem + ".cu"),
                "--dir", FIXTURE_DIR, "--stem", stem]
        for arch in ARCHS:
            args += ["--arch", arch]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = cs.main(args)
        return rc, out.getvalue()

    def need_sass(self):
        missing = [a for a in ARCHS
                   if not os.path.exists(os.path.join(FIXTURE_DIR, "bad_spills.sm_%s.sass" % a))]
        if missing:
            self.skipTest("no SASS listing for sm_%s (cuobjdump not found)" % ",".join(missing))

    def lines_about(self, output, *fragments):
        return [l for l in output.splitlines() if all(f in l for f in fragments)]

    def test_spilling_and_stack_kernels_fail_on_every_arch(self):
        rc, out = self.check("bad_spills")
        self.assertEqual(rc, 1, out)
        for arch in ARCHS:
            self.assertTrue(self.lines_about(out, "sm_%s " % arch, "register_pressure", "spills",
                                             "exceeds 0"), out)
            self.assertTrue(self.lines_about(out, "sm_%s " % arch, "dynamic_index_array",
                                             "stack", "exceeds 0"), out)

    def test_local_memory_instructions_are_reported(self):
        self.need_sass()
        rc, out = self.check("bad_spills")
        for arch in ARCHS:
            self.assertTrue(self.lines_about(out, "sm_%s " % arch, "dynamic_index_array",
                                             "STL", "must be absent"), out)

    def test_each_broken_declaration_is_reported(self):
        rc, out = self.check("bad_declarations")
        self.assertEqual(rc, 1, out)
        for arch in ARCHS:
            for fragments in (("undeclared_scale", "undeclared kernel"),
                              ("over_register_budget", "exceeds 2"),
                              ("missing_smem_budget", "no shared memory budget"),
                              ("renamed_away", "matches no kernel")):
                self.assertTrue(self.lines_about(out, "sm_%s" % arch, *fragments), out)

    def test_wrong_sass_expectations_are_reported(self):
        self.need_sass()
        rc, out = self.check("bad_declarations")
        for arch in ARCHS:
            for fragments in (("SASS lacks HMMA",), ("SASS lacks LDG.E.128",),
                              ("STG", "must be absent"), ("DFMA is not the dominant",)):
                self.assertTrue(self.lines_about(out, "sm_%s " % arch, "wrong_sass_expectations",
                                                 *fragments), out)


def load_tests(loader, standard_tests, pattern):
    # Without a CUDA build there are no fixtures to check: leave those tests
    # out rather than report the whole self-test as skipped.
    if FIXTURE_DIR is None:
        return unittest.TestSuite(t for t in standard_tests
                                  if not any(isinstance(c, Fixtures) for c in t))
    return standard_tests


def main():
    global FIXTURE_DIR, ARCHS
    parser = argparse.ArgumentParser()
    parser.add_argument("--fixture-dir")
    parser.add_argument("--archs", default="", help="comma-separated, as built")
    args, rest = parser.parse_known_args()
    FIXTURE_DIR = args.fixture_dir
    ARCHS = [a for a in args.archs.split(",") if a]
    if FIXTURE_DIR and not ARCHS:
        parser.error("--fixture-dir needs --archs")
    result = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2).result
    if not result.wasSuccessful():
        return 1
    return cs.EXIT_SKIP if result.skipped else 0


if __name__ == "__main__":
    sys.exit(main())
