// The emulator's exact counts of what kernels executed (issue 28, item 5):
// the `--counters` of an emulated run, and what CI checks every cost model
// that declares them against (cost.hpp: bytes_l2_load, bytes_l2_store,
// tensor_ops).
//
// What is counted, exactly, whatever the schedule:
//  - tensor-core operations, 2*m*n*k per executed MMA instruction (mma.sync
//    and wmma per warp, wgmma per warpgroup (each of its four warps counts
//    its 16 rows), tcgen05.mma per issue (one CTA)), under the counter role
//    of its input and accumulator types (roofline/src/counter_metrics.cpp):
//    f16 -> "tensor_fp16_f32" / "tensor_fp16_f16" (by accumulator), bf16 ->
//    "tensor_bf16", tf32 -> "tensor_tf32", s8/u8 -> "tensor_int8", e4m3/e5m2
//    -> "tensor_fp8_f32" / "tensor_fp8_f16", e3m2/e2m3 -> "tensor_fp6_fp4_f32"
//    / "_f16", e2m1 -> "tensor_fp4" (f16 accumulator: "tensor_fp6_fp4_f16").
//    Mixed FP8/FP6/FP4 operands count under the wider of A and B.  The
//    block-scaled kinds (mxf8f6f4, mxf4, mxf4nvf4) have no roles of their
//    own: they count under their element types' roles (e4m3 ->
//    "tensor_fp8_f32", e2m3 -> "tensor_fp6_fp4_f32", e2m1 -> "tensor_fp4");
//  - global bytes the project's copy paths request: cp.async (the source
//    bytes it reads: src-size, so a zero-filling copy counts less than
//    cp-size), TMA loads (the in-bounds part of each box, once however many
//    CTAs a multicast writes), TMA stores (the in-bounds part), bulk copies
//    both ways, ld.global.cs / st.global.cs (rl::ptx streaming, 16 bytes),
//    and rl::load128 / rl::store128 on global memory (16 bytes; on shared
//    memory they move nothing through L2 and count 0).  Loads count when issued;
//    bulk and TMA stores when performed (their wait, or the thread's exit).
//    Plain C++ loads and stores in a kernel are invisible to the emulator: a
//    cost model declares bytes_l2_load (or _store) only where every global
//    load (store) of the kernel goes through a counted path.
//
// One count for the process: several emulated devices add to the same
// counts.  Counting is off until reset_counts(); while off a hook costs a
// call and one relaxed atomic load.  Thread-safe (per host thread
// accumulators summed at read; racecheck-clean).
#pragma once

#include <cstddef>
#include <map>
#include <string>

namespace rl::emu {

struct Counts {
  std::map<std::string, double> tensor_ops;  // counter role key -> operations
  double global_load_bytes = 0;
  double global_store_bytes = 0;
};

// Zeroes the counts and turns counting on (all devices, all workers).
void reset_counts();
// The counts since reset_counts(), summed over every worker; call after the
// launches to count have completed (cudaDeviceSynchronize / stream sync).
Counts read_counts();
// Turns counting off again (the counts stay readable).
void stop_counting();

// Hooks for the emulated instructions and the rl:: copy helpers.  These
// count every call: for paths whose address is global by construction
// (cp.async sources, TMA, bulk copies, ld/st.global).
void count_global_load(std::size_t bytes);
void count_global_store(std::size_t bytes);
// For an access through a generic `address` (rl::load128 / store128):
// nothing where it lies in shared memory (the running block's dynamic or
// static __shared__ memory, or a CTA of its cluster's dynamic shared memory),
// else `bytes`.  While off the same cost as above: the address is looked at
// only while counting.  Named apart from the byte-only hooks, which
// ptx_memory.cpp declares weak and tests for nullptr by name.
void count_generic_load(const void* address, std::size_t bytes);
void count_generic_store(const void* address, std::size_t bytes);
// `role`: a counter role key from the list above (a string literal).
void count_tensor_ops(const char* role, double operations);

}  // namespace rl::emu
