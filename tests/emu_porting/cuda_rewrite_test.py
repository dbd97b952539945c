"""emu/tools/cuda_rewrite.py: the launch and extern __shared__ rewrites, what
they leave alone, the line numbers they keep, and the errors they give."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "..", "emu", "tools", "cuda_rewrite.py")
LAUNCH = "::rl::emu::launch_as_written(RL_EMU_KERNEL("


def rewrite(files: dict[str, str], main: str = "a.cu") -> tuple[int, str, str, str]:
    """Writes `files` into a fresh folder, rewrites `main`; returns (status,
    rewritten main without its prologue, stderr, folder)."""
    folder = tempfile.mkdtemp(prefix="rl-rewrite-")
    for name, text in files.items():
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    mirror = os.path.join(folder, "mirror")
    source = os.path.join(folder, main)
    result = subprocess.run([sys.executable, TOOL, "--source", source, "--mirror-root", mirror,
                             "--depfile", os.path.join(folder, "out.d")],
                            capture_output=True, text=True, check=False)
    output = ""
    out_path = os.path.join(mirror, source.lstrip(os.sep)) + ".cpp"
    if result.returncode == 0:
        with open(out_path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        assert lines[0] == "#include <cuda_runtime.h>", lines[0]
        line_directive = lines.index(f'#line 1 "{source}"')  # after refused inline PTX's declarations
        output = "\n".join(lines[line_directive + 1:])
    return result.returncode, output, result.stderr, folder


class Launches(unittest.TestCase):
    def test_two_three_and_four_arguments_get_nvccs_defaults(self):
        status, out, _, _ = rewrite({"a.cu": "k<<<g, b>>>(x);\nk<<<g, b, s>>>(x);\nk<<<g, b, s, st>>>(x, y);\n"})
        self.assertEqual(status, 0)
        self.assertEqual(out, f"{LAUNCH}k), g, b, 0, ::cudaStream_t{{}}, x);\n"
                              f"{LAUNCH}k), g, b, s, ::cudaStream_t{{}}, x);\n"
                              f"{LAUNCH}k), g, b, s, st, x, y);\n")

    def test_no_arguments(self):
        _, out, _, _ = rewrite({"a.cu": "k<<<1, 1>>>();"})
        self.assertEqual(out, f"{LAUNCH}k), 1, 1, 0, ::cudaStream_t{{}});")

    def test_template_arguments_and_qualified_names_stay_with_the_kernel(self):
        _, out, _, _ = rewrite({"a.cu": "ns::k<64, A<int>><<<dim3(a, b), 32>>>(p);"})
        self.assertEqual(out, f"{LAUNCH}ns::k<64, A<int>>), dim3(a, b), 32, 0, ::cudaStream_t{{}}, p);")

    def test_brackets_inside_the_template_arguments(self):
        _, out, _, _ = rewrite({"a.cu": "k<sizeof(T), (A > B)><<<1, 2>>>(x);"})
        self.assertEqual(out, f"{LAUNCH}k<sizeof(T), (A > B)>), 1, 2, 0, ::cudaStream_t{{}}, x);")

    def test_a_multi_line_launch_keeps_every_later_line_number(self):
        source = "k\n<<<g,\n   b>>>(\n  x,\n  y);\nint after;\n"
        _, out, _, _ = rewrite({"a.cu": source})
        self.assertEqual(out.count("\n"), source.count("\n"))
        self.assertEqual(out.split("\n")[5], "int after;")

    def test_a_launch_in_a_macro_stays_one_macro(self):
        source = "#define RUN(k, x) \\\n  k<<<1, 32>>> \\\n  (x)\nint after;\n"
        _, out, _, _ = rewrite({"a.cu": source})
        self.assertIn(f"{LAUNCH}k), 1, 32, 0, ::cudaStream_t{{}}, x)", out)
        self.assertEqual(out.split("\n")[3], "int after;")
        for line in out.split("\n")[:2]:
            self.assertTrue(line.endswith("\\"), line)

    def test_comments_strings_and_raw_strings_are_left_alone(self):
        source = ('// k<<<1, 1>>>(x)\n/* k<<<1, 1>>>(x) */\nconst char* s = "k<<<1, 1>>>(x)";\n'
                  'const char* r = R"x(k<<<1, 1>>>(x))x";\nchar c = \'<\';\nint n = 1\'000;\n')
        status, out, _, _ = rewrite({"a.cu": source})
        self.assertEqual(status, 0)
        self.assertEqual(out, source)

    def test_shift_and_template_closers_in_the_configuration(self):
        _, out, _, _ = rewrite({"a.cu": "k<<<n >> 1, f<g<int>>(2)>>>(x);"})
        self.assertEqual(out, f"{LAUNCH}k), n >> 1, f<g<int>>(2), 0, ::cudaStream_t{{}}, x);")

    def test_a_header_beside_the_source_is_rewritten_into_the_mirror(self):
        files = {"k.cuh": "inline void run(int* p) { t<4><<<1, 1>>>(p); }\n",
                 "a.cu": '#include "k.cuh"\n'}
        _, _, _, folder = rewrite(files)
        mirrored = os.path.join(folder, "mirror", folder.lstrip(os.sep), "k.cuh")
        with open(mirrored, encoding="utf-8") as f:
            self.assertIn(f"{LAUNCH}t<4>), 1, 1", f.read())

    def test_operator_shift_is_not_a_launch(self):
        source = "bool operator<<<T>(A a, B b);\n"
        status, out, _, _ = rewrite({"a.cu": source})
        self.assertEqual((status, out), (0, source))


class ExternShared(unittest.TestCase):
    def test_a_one_dimensional_array_becomes_a_pointer_to_dynamic_shared_memory(self):
        _, out, _, _ = rewrite({"a.cu": "__global__ void k() {\n  extern __shared__ float s[];\n}\n"})
        self.assertIn("float* const s = static_cast<float*>(::rl::emu::detail::dynamic_shared_memory());", out)

    def test_extents_after_the_first_and_alignment_attributes(self):
        _, out, _, _ = rewrite({"a.cu": "__global__ void k() {\n  extern __shared__ __align__(16) half t[][16 + 1][2];\n}\n"})
        self.assertIn("half (*const t)[16 + 1][2] = reinterpret_cast<half (*)[16 + 1][2]>(", out)

    def test_a_template_parameter_type(self):
        _, out, _, _ = rewrite({"a.cu": "template <class T> __global__ void k() { extern __shared__ T buf[]; }"})
        self.assertIn("T* const buf = static_cast<T*>(", out)

    def test_at_namespace_scope_the_name_becomes_a_macro(self):
        source = "namespace n {\nextern __shared__ float smem[];\n}\nint after;\n"
        _, out, _, _ = rewrite({"a.cu": source})
        self.assertEqual(out.split("\n")[1],
                         "#define smem (static_cast<float*>(::rl::emu::detail::dynamic_shared_memory()))")
        self.assertEqual(out.split("\n")[3], "int after;")

    def test_a_struct_member_function_is_not_namespace_scope(self):
        _, out, _, _ = rewrite({"a.cu": "struct S { __device__ void f() { extern __shared__ int s[]; } };"})
        self.assertIn("int* const s =", out)


class InlinePtx(unittest.TestCase):
    def rewritten_with_prologue(self, source: str) -> str:
        _, _, _, folder = rewrite({"a.cu": source})
        path = os.path.join(folder, "mirror", folder.lstrip(os.sep), "a.cu.cpp")
        with open(path, encoding="utf-8") as f:
            return f.read()

    def test_an_asm_statement_becomes_a_call_that_fails_to_compile_naming_the_instruction(self):
        text = self.rewritten_with_prologue(
            'void f(unsigned a) {\n  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\\n" :: "r"(a), "l"(&a));\n}\n')
        self.assertIn('[[gnu::error("inline PTX \'cp.async.cg.shared.global\' does not run on the emulator', text)
        self.assertIn("  rl_emu_inline_ptx_cp_async_cg_shared_global();\n}", text)

    def test_braces_register_declarations_and_predicates_are_skipped_to_the_instruction(self):
        text = self.rewritten_with_prologue(
            'void f(int a) { asm("{\\n\\t.reg .pred p;\\n\\t@p setp.ne.b32 p, %0, 0;\\n}" :: "r"(a)); }')
        self.assertIn("inline PTX 'setp.ne.b32'", text)

    def test_an_empty_template_is_a_compiler_barrier_and_stays(self):
        source = 'void f() { asm volatile("" ::: "memory"); __asm__ __volatile__("":::"memory"); }\n'
        _, out, _, _ = rewrite({"a.cu": source})
        self.assertEqual(out, source)

    def test_a_multi_line_asm_keeps_later_line_numbers(self):
        source = 'void f(unsigned* r, unsigned a) {\n  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];"\n    : "=r"(r[0])\n    : "r"(a));\n  int after;\n}\n'
        _, out, _, _ = rewrite({"a.cu": source})
        self.assertEqual(out.split("\n")[4], "  int after;")


class Errors(unittest.TestCase):
    def expect_error(self, source: str, line: int, words: str):
        status, _, err, folder = rewrite({"a.cu": source})
        self.assertEqual(status, 1)
        self.assertEqual(err.count("\n"), 1, err)
        self.assertTrue(err.startswith(f"{os.path.join(folder, 'a.cu')}:{line}: error: "), err)
        self.assertIn(words, err)

    def test_one_configuration_argument(self):
        self.expect_error("int a;\nk<<<g>>>(x);\n", 2, "2 to 4 configuration arguments, not 1")

    def test_five_configuration_arguments(self):
        self.expect_error("k<<<a, b, c, d, e>>>(x);\n", 1, "not 5")

    def test_no_closing_launch(self):
        self.expect_error("\n\nk<<<g, b>>> x;\n", 3, "without a matching '>>>('")

    def test_extern_shared_with_a_first_extent(self):
        self.expect_error("__global__ void k() { extern __shared__ float s[4]; }", 1, "no first extent")

    def test_namespace_scope_extern_shared_sharing_a_line(self):
        self.expect_error("extern __shared__ float s[]; int x;\n", 1, "on its own line")

    def test_an_unreadable_source(self):
        result = subprocess.run([sys.executable, TOOL, "--source", "/nonexistent/a.cu", "--mirror-root", "/tmp/x"],
                                capture_output=True, text=True, check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn("/nonexistent/a.cu: error: cannot read", result.stderr)


class Outputs(unittest.TestCase):
    def test_the_depfile_names_the_source_and_the_headers_it_rewrote(self):
        _, _, _, folder = rewrite({"h.cuh": "int h;\n", "a.cu": '#include "h.cuh"\n#include "missing.h"\n'})
        with open(os.path.join(folder, "out.d"), encoding="utf-8") as f:
            dep = f.read()
        self.assertIn(os.path.join(folder, "a.cu"), dep)
        self.assertIn(os.path.join(folder, "h.cuh"), dep)
        self.assertNotIn("missing.h", dep)

    def test_an_unchanged_rewrite_keeps_the_output_timestamp(self):
        _, _, _, folder = rewrite({"a.cu": "k<<<1, 1>>>();\n"})
        source = os.path.join(folder, "a.cu")
        out = os.path.join(folder, "mirror", source.lstrip(os.sep)) + ".cpp"
        os.utime(out, (1, 1))
        subprocess.run([sys.executable, TOOL, "--source", source, "--mirror-root", os.path.join(folder, "mirror")],
                       check=True)
        self.assertEqual(os.stat(out).st_mtime, 1)


if __name__ == "__main__":
    unittest.main()
