// The x86-64 System V context switch behind fiber_switch.hpp.
//
// It saves what the psABI says a callee must preserve and a plain call does
// not already: rbx, rbp, r12-r15 and the stack pointer (the return address is
// on the stack).  Everything else is caller-saved, so the compiler has already
// spilled what it needs around the call.
//
// Unlike Boost.Context it does not save and restore MXCSR's control bits and
// the x87 control word (rounding mode, flush-to-zero, precision).  The psABI
// makes them callee-saved, which only requires that they are the same after
// the call as before it; they are, because no code that runs between two
// switches changes them: CUDA device code has no way to set a rounding mode
// or FTZ through the C environment (rounding-mode intrinsics are emulated by
// computation), and the emulator never calls fesetround or ldmxcsr.  So every
// fiber runs with the control bits of the worker thread it runs on, as it did
// with Boost.Context, which copied them from that same thread when it made
// the context.  Skipping them saves an ldmxcsr and an fldcw per switch.
//
// Not compatible with CET shadow stacks (a `ret` to another fiber's return
// address); like glibc's default, the emulator runs without them.
#include "fiber_switch.hpp"

#if !defined(RL_EMU_PORTABLE_SWITCH)

// rl_emu_switch_context(Context* save /* rdi */, Context to /* rsi */).
// rl_emu_context_start: the first `ret` into a fresh context lands here with
// r12 = the entry (make_context put it in r12's slot) and the stack aligned;
// its CFI marks the return address undefined, so an unwinder or debugger
// walking a fiber's stack stops at its first frame.
__asm__(R"(
    .text
    .p2align 4
    .globl rl_emu_switch_context
    .hidden rl_emu_switch_context
    .type rl_emu_switch_context, @function
rl_emu_switch_context:
    .cfi_startproc
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .cfi_endproc
    .size rl_emu_switch_context, .-rl_emu_switch_context

    .p2align 4
    .globl rl_emu_context_start
    .hidden rl_emu_context_start
    .type rl_emu_context_start, @function
rl_emu_context_start:
    .cfi_startproc
    .cfi_undefined rip
    call *%r12
    ud2
    .cfi_endproc
    .size rl_emu_context_start, .-rl_emu_context_start
)");

#endif
