// The emulator's context switch: one CUDA thread's fiber to another's.
//
// On x86-64 System V (Linux, ELF) it is a dozen instructions of our own
// (fiber_switch.cpp): push the callee-saved registers, swap stack pointers,
// pop, return.  Elsewhere Boost.Context's fcontext does the same job.  The
// scheduler sees one interface either way:
//   Context make_context<Entry>(bottom, size)  a fresh context on a stack;
//                                              the first switch to it calls
//                                              Entry(), which never returns
//                                              (it ends by switching away);
//   switch_context(&save, to)                  saves the running context in
//                                              `save`, resumes `to`; returns
//                                              when something resumes `save`.
// Define RL_EMU_PORTABLE_SWITCH to use the Boost.Context path on x86-64 too.
#pragma once

#include <cstddef>
#include <cstdint>

#if !defined(RL_EMU_PORTABLE_SWITCH) && !(defined(__x86_64__) && defined(__ELF__))
#define RL_EMU_PORTABLE_SWITCH 1
#endif

#if defined(RL_EMU_PORTABLE_SWITCH)
#include <boost/context/detail/fcontext.hpp>
#endif

namespace rl::emu::detail {

// A suspended context: where its switch_context left it.
using Context = void*;

#if !defined(RL_EMU_PORTABLE_SWITCH)

extern "C" {
// fiber_switch.cpp: the switch itself, and where a fresh context's first
// switch returns to (it calls the entry held in the context's r12 slot).
void rl_emu_switch_context(Context* save, Context to);
void rl_emu_context_start();
}

inline void switch_context(Context* save, Context to) {
  rl_emu_switch_context(save, to);
}

template <void (*Entry)()>
Context make_context(void* bottom, std::size_t size) {
  // The frame rl_emu_switch_context pops: r15 r14 r13 r12 rbx rbp, then the
  // return address.  After that `ret` the stack pointer must be 16-byte
  // aligned, so that rl_emu_context_start's call enters Entry as any call
  // would (rsp + 8 aligned).
  const auto top = (reinterpret_cast<std::uintptr_t>(bottom) + size) & ~std::uintptr_t{15};
  auto* frame = reinterpret_cast<std::uintptr_t*>(top - 72);
  frame[0] = frame[1] = frame[2] = frame[4] = 0;
  frame[3] = reinterpret_cast<std::uintptr_t>(Entry);  // r12
  frame[5] = 0;                                        // rbp: frame-pointer chains end here
  frame[6] = reinterpret_cast<std::uintptr_t>(&rl_emu_context_start);
  return frame;
}

#else

namespace fcontext = boost::context::detail;

// fcontext hands the resumed side the context that was left and the jump's
// data pointer; the data is the leaver's `save`, filed on arrival.
inline void switch_context(Context* save, Context to) {
  const fcontext::transfer_t from = fcontext::jump_fcontext(to, save);
  *static_cast<Context*>(from.data) = from.fctx;
}

template <void (*Entry)()>
void fcontext_start(fcontext::transfer_t from) {
  *static_cast<Context*>(from.data) = from.fctx;
  Entry();
}

template <void (*Entry)()>
Context make_context(void* bottom, std::size_t size) {
  return fcontext::make_fcontext(static_cast<char*>(bottom) + size, size, &fcontext_start<Entry>);
}

#endif

}  // namespace rl::emu::detail
