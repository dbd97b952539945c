// The decoder behind the misaligned-access report (emu/src/fault_decode.hpp),
// on instructions and register values made up here: the effective address
// of each addressing form a compiler emits for vector moves (base, base +
// index * scale + displacement, rip-relative, fs-relative: a static
// __shared__ object is a thread_local), the width it must be aligned to, and
// the faults that are not misalignments.
#include <gtest/gtest.h>

#include <asm/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>

#include "fault_decode.hpp"

namespace {

#if defined(__x86_64__) && defined(RL_EMU_HAVE_CAPSTONE)

struct Decoded {
  bool misaligned;
  std::string text;
};

// Decodes `code` as if it had faulted at its first byte with `registers` set.
template <std::size_t N>
Decoded decode(const unsigned char (&code)[N],
               std::initializer_list<std::pair<int, std::uint64_t>> registers) {
  rl::emu::detail::prepare_fault_decoder();
  ucontext_t context{};
  context.uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(reinterpret_cast<std::uintptr_t>(code));
  for (const auto& [slot, value] : registers)
    context.uc_mcontext.gregs[slot] = static_cast<greg_t>(value);
  char text[256];
  const bool misaligned = rl::emu::detail::describe_general_protection(context, text, sizeof text);
  return {misaligned, text};
}

std::string hex(std::uint64_t v) {
  char s[32];
  std::snprintf(s, sizeof s, "%p", reinterpret_cast<void*>(v));
  return s;
}

TEST(FaultDecode, movaps_store_through_a_register_off_16_bytes_is_misaligned) {
  static const unsigned char movaps_store[] = {0x0f, 0x29, 0x00};  // movaps [rax], xmm0
  const Decoded d = decode(movaps_store, {{REG_RAX, 0x1008}});
  EXPECT_TRUE(d.misaligned);
  EXPECT_EQ(d.text,
            "misaligned address: movaps (16-byte store) address 0x1008 is not 16-byte aligned");
}

TEST(FaultDecode, avx_load_with_index_scale_and_displacement_needs_32_bytes) {
  static const unsigned char vmovdqa_load[] = {0xc5, 0xfd, 0x6f,
                                               0x44, 0x8f, 0x08};  // vmovdqa ymm0, [rdi+rcx*4+8]
  const Decoded d = decode(vmovdqa_load, {{REG_RDI, 0x1000}, {REG_RCX, 2}});
  EXPECT_TRUE(d.misaligned);
  EXPECT_EQ(d.text,
            "misaligned address: vmovdqa (32-byte load) address 0x1010 is not 32-byte aligned");
}

TEST(FaultDecode, rip_relative_address_counts_from_the_next_instruction) {
  alignas(16) static const unsigned char movdqa_load[] = {
      0x66, 0x0f, 0x6f, 0x05, 0x11, 0x00, 0x00, 0x00};  // movdqa xmm0, [rip+0x11]
  const Decoded d = decode(movdqa_load, {});
  EXPECT_TRUE(d.misaligned);
  EXPECT_EQ(d.text, "misaligned address: movdqa (16-byte load) address " +
                        hex(reinterpret_cast<std::uintptr_t>(movdqa_load) + 8 + 0x11) +
                        " is not 16-byte aligned");
}

TEST(FaultDecode, fs_relative_address_adds_the_thread_pointer) {
  static const unsigned char movaps_fs[] = {0x64, 0x0f, 0x29, 0x04, 0x25,
                                            0x08, 0x00, 0x00, 0x00};  // movaps fs:[0x8], xmm0
  unsigned long fs = 0;
  ASSERT_EQ(syscall(SYS_arch_prctl, ARCH_GET_FS, &fs), 0);
  ASSERT_EQ(fs % 16, 0U);
  const Decoded d = decode(movaps_fs, {});
  EXPECT_TRUE(d.misaligned);
  EXPECT_EQ(d.text, "misaligned address: movaps (16-byte store) address " + hex(fs + 8) +
                        " is not 16-byte aligned");
}

TEST(FaultDecode, aligned_or_non_canonical_addresses_are_not_called_misaligned) {
  static const unsigned char movaps_store[] = {0x0f, 0x29, 0x00};  // movaps [rax], xmm0
  const Decoded aligned = decode(movaps_store, {{REG_RAX, 0x1010}});
  EXPECT_FALSE(aligned.misaligned);
  EXPECT_EQ(aligned.text.rfind("general-protection fault: movaps xmmword ptr [rax], xmm0 (16-byte "
                               "store) address 0x1010 at rip ",
                               0),
            0U)
      << aligned.text;
  const Decoded wild = decode(movaps_store, {{REG_RAX, 0x8000000000000008}});
  EXPECT_FALSE(wild.misaligned);
  EXPECT_NE(wild.text.find("address 0x8000000000000008 at rip "), std::string::npos) << wild.text;
  EXPECT_NE(wild.text.find("(a non-canonical address)"), std::string::npos) << wild.text;
  static const unsigned char ud2[] = {0x0f, 0x0b};
  const Decoded no_memory = decode(ud2, {});
  EXPECT_FALSE(no_memory.misaligned);
  EXPECT_EQ(no_memory.text.rfind("general-protection fault: ud2 at rip ", 0), 0U) << no_memory.text;
}

#endif

}  // namespace
