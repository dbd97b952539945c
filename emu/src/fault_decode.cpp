// Decoding the instruction behind a general-protection fault (fault_decode.hpp).
#include "fault_decode.hpp"

#include <cstdint>
#include <cstdio>

#if defined(RL_EMU_HAVE_CAPSTONE) && defined(__x86_64__)
#include <asm/prctl.h>
#include <capstone/capstone.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstring>
#endif

namespace rl::emu::detail {
namespace {

void* instruction_pointer(const ucontext_t& context) {
#if defined(__x86_64__)
  return reinterpret_cast<void*>(context.uc_mcontext.gregs[REG_RIP]);
#else
  (void)context;
  return nullptr;
#endif
}

// What is said without a decoder: on x86-64 user code, #GP with a canonical
// address is almost always an aligned SSE/AVX move at a misaligned address.
void describe_undecoded(const ucontext_t& context, char* out, std::size_t size) {
  std::snprintf(out, size,
                "general-protection fault: most likely a misaligned vector access (16-byte "
                "aligned SSE/AVX move) at rip %p",
                instruction_pointer(context));
}

}  // namespace

#if defined(RL_EMU_HAVE_CAPSTONE) && defined(__x86_64__)
namespace {

csh g_decoder = 0;
cs_insn* g_instruction = nullptr;  // from cs_malloc, with its detail record
std::atomic_flag g_decoder_busy;   // clear (C++20)

// Capstone's allocations (CS_OPT_MEM) come from this arena, not malloc:
// cs_disasm_iter allocates short-lived buffers, and the fault may have
// interrupted malloc.  A bump allocator whose top block pops when freed, so
// the decoder's buffers never pile up; used once at preparation and then
// only under g_decoder_busy.  Exhausted, Capstone fails and the report says
// what is known without it.
alignas(16) unsigned char g_arena[64 * 1024];
std::size_t g_arena_top = 0;

struct ArenaBlock {
  std::size_t bytes;
  std::size_t below;  // the top before this block
};
static_assert(sizeof(ArenaBlock) % 16 == 0);

std::size_t arena_span(std::size_t bytes) {
  return sizeof(ArenaBlock) + (bytes + 15) / 16 * 16;
}

void* arena_malloc(std::size_t bytes) {
  if (bytes > sizeof g_arena || arena_span(bytes) > sizeof g_arena - g_arena_top) return nullptr;
  auto* block = reinterpret_cast<ArenaBlock*>(g_arena + g_arena_top);
  *block = ArenaBlock{bytes, g_arena_top};
  g_arena_top += arena_span(bytes);
  return block + 1;
}

void arena_free(void* p) {
  if (p == nullptr) return;
  const ArenaBlock* block = static_cast<ArenaBlock*>(p) - 1;
  if (block->below + arena_span(block->bytes) == g_arena_top) g_arena_top = block->below;
}

void* arena_calloc(std::size_t count, std::size_t size) {
  if (size != 0 && count > sizeof g_arena / size) return nullptr;
  void* p = arena_malloc(count * size);
  if (p != nullptr) std::memset(p, 0, count * size);
  return p;
}

void* arena_realloc(void* p, std::size_t bytes) {
  if (p == nullptr) return arena_malloc(bytes);
  const std::size_t had = (static_cast<ArenaBlock*>(p) - 1)->bytes;
  if (bytes <= had) return p;
  void* grown = arena_malloc(bytes);
  if (grown != nullptr) std::memcpy(grown, p, had);
  return grown;
}

int arena_vsnprintf(char* out, std::size_t size, const char* format, va_list args) {
  return std::vsnprintf(out, size, format, args);
}

struct GeneralRegister {
  x86_reg name;
  int slot;  // index into mcontext_t::gregs
};
constexpr GeneralRegister kGeneralRegisters[] = {
    {X86_REG_RAX, REG_RAX}, {X86_REG_RBX, REG_RBX}, {X86_REG_RCX, REG_RCX}, {X86_REG_RDX, REG_RDX},
    {X86_REG_RSI, REG_RSI}, {X86_REG_RDI, REG_RDI}, {X86_REG_RBP, REG_RBP}, {X86_REG_RSP, REG_RSP},
    {X86_REG_R8, REG_R8},   {X86_REG_R9, REG_R9},   {X86_REG_R10, REG_R10}, {X86_REG_R11, REG_R11},
    {X86_REG_R12, REG_R12}, {X86_REG_R13, REG_R13}, {X86_REG_R14, REG_R14}, {X86_REG_R15, REG_R15},
};

// A base or index register's value at the fault (rip: the next
// instruction's address, as rip-relative addressing uses it).
bool register_value(const mcontext_t& m, x86_reg name, std::uint64_t next_rip,
                    std::uint64_t* value) {
  if (name == X86_REG_INVALID) {
    *value = 0;
    return true;
  }
  if (name == X86_REG_RIP) {
    *value = next_rip;
    return true;
  }
  for (const GeneralRegister& r : kGeneralRegisters) {
    if (r.name != name) continue;
    *value = static_cast<std::uint64_t>(m.gregs[r.slot]);
    return true;
  }
  return false;  // a 32-bit address register: never emitted for x86-64 code
}

// fs is the thread pointer (thread_local objects, so static __shared__
// ones); the other segments have base 0 in 64-bit mode, gs is not used.
bool segment_base(x86_reg segment, std::uint64_t* base) {
  if (segment == X86_REG_FS) {
    unsigned long fs = 0;
    if (syscall(SYS_arch_prctl, ARCH_GET_FS, &fs) != 0) return false;
    *base = fs;
    return true;
  }
  *base = 0;
  return segment != X86_REG_GS;
}

const char* access_kind(std::uint8_t access) {
  if ((access & CS_AC_READ) != 0 && (access & CS_AC_WRITE) != 0) return "read-modify-write";
  return (access & CS_AC_WRITE) != 0 ? "store" : "load";
}

bool canonical(std::uint64_t address) {
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(address << 16) >> 16) == address;
}

bool describe_decoded(const ucontext_t& context, char* out, std::size_t size) {
  const mcontext_t& m = context.uc_mcontext;
  const auto rip = static_cast<std::uint64_t>(m.gregs[REG_RIP]);
  const auto* code = reinterpret_cast<const std::uint8_t*>(rip);
  std::size_t bytes = 15;  // the longest x86 instruction
  std::uint64_t next = rip;
  if (!cs_disasm_iter(g_decoder, &code, &bytes, &next, g_instruction)) {
    describe_undecoded(context, out, size);
    return false;
  }
  const cs_insn& insn = *g_instruction;
  const cs_x86& x86 = insn.detail->x86;
  for (std::uint8_t i = 0; i < x86.op_count; ++i) {
    const cs_x86_op& op = x86.operands[i];
    if (op.type != X86_OP_MEM) continue;
    std::uint64_t segment = 0, base = 0, index_value = 0;
    if (!segment_base(op.mem.segment, &segment) || !register_value(m, op.mem.base, next, &base) ||
        !register_value(m, op.mem.index, next, &index_value))
      break;
    const std::uint64_t address = segment + base +
                                  index_value * static_cast<std::uint64_t>(op.mem.scale) +
                                  static_cast<std::uint64_t>(op.mem.disp);
    const unsigned width = op.size;
    if ((width == 16 || width == 32 || width == 64) && address % width != 0 && canonical(address)) {
      std::snprintf(
          out, size, "misaligned address: %s (%u-byte %s) address %p is not %u-byte aligned",
          insn.mnemonic, width, access_kind(op.access), reinterpret_cast<void*>(address), width);
      return true;
    }
    std::snprintf(out, size, "general-protection fault: %s %s (%u-byte %s) address %p at rip %p%s",
                  insn.mnemonic, insn.op_str, width, access_kind(op.access),
                  reinterpret_cast<void*>(address), reinterpret_cast<void*>(rip),
                  canonical(address) ? "" : " (a non-canonical address)");
    return false;
  }
  std::snprintf(out, size, "general-protection fault: %s%s%s at rip %p", insn.mnemonic,
                insn.op_str[0] != '\0' ? " " : "", insn.op_str, reinterpret_cast<void*>(rip));
  return false;
}

}  // namespace

void prepare_fault_decoder() {
  static const bool prepared = [] {
    cs_opt_mem memory{arena_malloc, arena_calloc, arena_realloc, arena_free, arena_vsnprintf};
    if (cs_option(0, CS_OPT_MEM, reinterpret_cast<std::size_t>(&memory)) != CS_ERR_OK) return false;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &g_decoder) != CS_ERR_OK) return false;
    if (cs_option(g_decoder, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK) return false;
    g_instruction = cs_malloc(g_decoder);
    if (g_instruction == nullptr) return false;
    // Capstone sorts its register tables (qsort, which may call malloc) at
    // the first decode: done here, outside any signal handler.
    static const std::uint8_t kWarmUp[] = {0x0f, 0x29, 0x00,  // movaps [rax], xmm0
                                           0x66, 0x0f, 0x6f, 0x05,
                                           0x00, 0x00, 0x00, 0x00,  // movdqa xmm0, [rip]
                                           0xc5, 0xfd, 0x6f, 0x00,  // vmovdqa ymm0, [rax]
                                           0x8b, 0x00,              // mov eax, [rax]
                                           0x0f, 0x0b};             // ud2
    const std::uint8_t* code = kWarmUp;
    std::size_t bytes = sizeof kWarmUp;
    std::uint64_t address = 0;
    while (cs_disasm_iter(g_decoder, &code, &bytes, &address, g_instruction)) {
    }
    return true;
  }();
  (void)prepared;
}

bool describe_general_protection(const ucontext_t& context, char* out, std::size_t size) {
  if (g_instruction == nullptr) {
    describe_undecoded(context, out, size);
    return false;
  }
  // Another host thread's fault holds the decoder for microseconds; the
  // holder is never this thread (a fault inside the decoder would be
  // delivered with SIGSEGV blocked, which ends the process).
  while (g_decoder_busy.test_and_set(std::memory_order_acquire)) {
  }
  const bool misaligned = describe_decoded(context, out, size);
  g_decoder_busy.clear(std::memory_order_release);
  return misaligned;
}

#else  // without Capstone (or off x86-64): the likely cause and the rip

void prepare_fault_decoder() {}

bool describe_general_protection(const ucontext_t& context, char* out, std::size_t size) {
  describe_undecoded(context, out, size);
  return false;
}

#endif

}  // namespace rl::emu::detail
