// What a general-protection fault in a CUDA thread was (thread_faults.cpp).
//
// On x86-64 an aligned vector move (movaps, movdqa, vmovdqa, or a legacy SSE
// instruction with a 16-byte memory operand) at an address that is not a
// multiple of its size raises #GP, which Linux delivers as SIGSEGV with
// si_code SI_KERNEL and si_addr 0: "SIGSEGV at address (nil)" would point away
// from the cause.  A GPU reports the same access as a misaligned address, so
// the faulting instruction is decoded (Capstone, when CMake found it) and its
// memory operand's effective address computed from the signal's registers.
#pragma once

#include <ucontext.h>

#include <cstddef>

namespace rl::emu::detail {

// Once, outside any signal handler (install_signal_handlers): opens the
// decoder and allocates the one instruction record the handler uses, so that
// decoding in the handler allocates nothing.
void prepare_fault_decoder();

// Describes the general-protection fault of `context` into `out` (one line,
// no trailing newline).  Returns true when it is a misaligned access:
//   "misaligned address: movaps (16-byte store) address 0x... is not 16-byte aligned"
// Otherwise (no decoder, an instruction without a memory operand, an aligned
// address such as a non-canonical pointer) the text says what is known, with
// the instruction's address.  Async-signal-safe: no allocation, no locks
// (concurrent faults on other host threads wait for the decoder by spinning).
bool describe_general_protection(const ucontext_t& context, char* out, std::size_t size);

}  // namespace rl::emu::detail
