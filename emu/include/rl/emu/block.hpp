// Block-level synchronisation, memory fences, atomics and timing intrinsics.
//
// __syncthreads is a barrier over the block's live threads: a thread that has
// exited counts as arrived (as on the hardware), but a barrier that completes
// after some threads exited without reaching it is a divergent barrier (UB in
// CUDA): the launch fails (synccheck).  Atomics are std::atomic_ref
// operations, so they are correct across blocks running on several host
// threads; like CUDA's they are relaxed, and __threadfence() is a full fence.
//
// Under ThreadSanitizer (RL_SANITIZE=thread, racecheck) relaxed atomics order
// nothing, and TSan does not model standalone fences, so the emulator models
// CUDA's fence-plus-atomic pattern itself: once a thread has executed a
// __threadfence*(), each of its later atomics releases what the thread did so
// far at the atomic's address, and every atomic acquires at its address.  The
// "last block" pattern (write, __threadfence, atomicInc; the block that sees
// the last ticket reads everyone's writes) is then race-free, while data
// handed over through an atomic flag without a fence is still a race.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define RL_EMU_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RL_EMU_TSAN 1
#endif
#endif

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <type_traits>

namespace rl::emu::detail {

struct BarrierResult {
  int true_count;  // threads whose predicate was non-zero
  int arrived;     // live threads that took part
};

BarrierResult syncthreads_reduce(int predicate);

// Lets the other threads of the block run (used by __nanosleep, so spin-waits
// on another thread of the block make progress).
void yield_thread();

#if defined(RL_EMU_TSAN)
void race_fence();
void race_atomic_begin(const void* address);
void race_atomic_end(const void* address);
#else
inline void race_fence() {}
inline void race_atomic_begin(const void*) {}
inline void race_atomic_end(const void*) {}
#endif

// Brackets one CUDA atomic for racecheck (see the top of this file).
struct RaceAtomic {
  const void* address;
  explicit RaceAtomic(const void* a) : address(a) { race_atomic_begin(a); }
  ~RaceAtomic() { race_atomic_end(address); }
  RaceAtomic(const RaceAtomic&) = delete;
  RaceAtomic& operator=(const RaceAtomic&) = delete;
};

// Blocks the calling thread until wake_waiters(object) is called for the same
// object (used by mbarrier.try_wait: it sleeps until its barrier changes).
// If no thread of the block can run any more, the deadlock report includes
// describe(object) for one sleeper, naming what it waits on.
using WaitDescriber = std::string (*)(const void* object);
void wait_on(const void* object, WaitDescriber describe);
// Makes the block's threads sleeping in wait_on(object) runnable.
void wake_waiters(const void* object);

template <typename T>
std::atomic_ref<T> atomic(T* address) {
  return std::atomic_ref<T>(*address);
}

template <typename T, typename Update>
T atomic_update(T* address, Update update) {
  const RaceAtomic race(address);
  std::atomic_ref<T> ref(*address);
  T old = ref.load(std::memory_order_relaxed);
  while (!ref.compare_exchange_weak(old, update(old), std::memory_order_relaxed)) {
  }
  return old;
}

}  // namespace rl::emu::detail

inline void __syncthreads() {
  rl::emu::detail::syncthreads_reduce(0);
}
inline int __syncthreads_count(int predicate) {
  return rl::emu::detail::syncthreads_reduce(predicate).true_count;
}
inline int __syncthreads_and(int predicate) {
  const auto r = rl::emu::detail::syncthreads_reduce(predicate);
  return r.true_count == r.arrived ? 1 : 0;
}
inline int __syncthreads_or(int predicate) {
  return rl::emu::detail::syncthreads_reduce(predicate).true_count > 0 ? 1 : 0;
}

inline void __threadfence_block() {
  rl::emu::detail::race_fence();
  std::atomic_thread_fence(std::memory_order_seq_cst);
}
inline void __threadfence() {
  rl::emu::detail::race_fence();
  std::atomic_thread_fence(std::memory_order_seq_cst);
}
inline void __threadfence_system() {
  rl::emu::detail::race_fence();
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

inline void __nanosleep(unsigned) {
  rl::emu::detail::yield_thread();
}

// Host steady-clock nanoseconds: monotonic like the SM clock, not cycles.
inline long long clock64() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// ---- atomics -----------------------------------------------------------------
#define RL_EMU_ATOMIC_RMW(name, op, T)                                            \
  inline T name(T* address, T value) {                                            \
    const rl::emu::detail::RaceAtomic race(address);                              \
    return rl::emu::detail::atomic(address).op(value, std::memory_order_relaxed); \
  }

RL_EMU_ATOMIC_RMW(atomicAdd, fetch_add, int)
RL_EMU_ATOMIC_RMW(atomicAdd, fetch_add, unsigned int)
RL_EMU_ATOMIC_RMW(atomicAdd, fetch_add, unsigned long long)
RL_EMU_ATOMIC_RMW(atomicAdd, fetch_add, float)
RL_EMU_ATOMIC_RMW(atomicAdd, fetch_add, double)
RL_EMU_ATOMIC_RMW(atomicSub, fetch_sub, int)
RL_EMU_ATOMIC_RMW(atomicSub, fetch_sub, unsigned int)
RL_EMU_ATOMIC_RMW(atomicExch, exchange, int)
RL_EMU_ATOMIC_RMW(atomicExch, exchange, unsigned int)
RL_EMU_ATOMIC_RMW(atomicExch, exchange, unsigned long long)
RL_EMU_ATOMIC_RMW(atomicExch, exchange, float)
RL_EMU_ATOMIC_RMW(atomicAnd, fetch_and, int)
RL_EMU_ATOMIC_RMW(atomicAnd, fetch_and, unsigned int)
RL_EMU_ATOMIC_RMW(atomicAnd, fetch_and, unsigned long long)
RL_EMU_ATOMIC_RMW(atomicOr, fetch_or, int)
RL_EMU_ATOMIC_RMW(atomicOr, fetch_or, unsigned int)
RL_EMU_ATOMIC_RMW(atomicOr, fetch_or, unsigned long long)
RL_EMU_ATOMIC_RMW(atomicXor, fetch_xor, int)
RL_EMU_ATOMIC_RMW(atomicXor, fetch_xor, unsigned int)
RL_EMU_ATOMIC_RMW(atomicXor, fetch_xor, unsigned long long)
#undef RL_EMU_ATOMIC_RMW

#define RL_EMU_ATOMIC_MINMAX(T)                                                                  \
  inline T atomicMax(T* address, T value) {                                                      \
    return rl::emu::detail::atomic_update(address,                                               \
                                          [value](T old) { return old < value ? value : old; }); \
  }                                                                                              \
  inline T atomicMin(T* address, T value) {                                                      \
    return rl::emu::detail::atomic_update(address,                                               \
                                          [value](T old) { return value < old ? value : old; }); \
  }
RL_EMU_ATOMIC_MINMAX(int)
RL_EMU_ATOMIC_MINMAX(unsigned int)
RL_EMU_ATOMIC_MINMAX(long long)
RL_EMU_ATOMIC_MINMAX(unsigned long long)
#undef RL_EMU_ATOMIC_MINMAX

#define RL_EMU_ATOMIC_CAS(T)                                                             \
  inline T atomicCAS(T* address, T compare, T value) {                                   \
    const rl::emu::detail::RaceAtomic race(address);                                     \
    T expected = compare;                                                                \
    rl::emu::detail::atomic(address).compare_exchange_strong(expected, value,            \
                                                             std::memory_order_relaxed); \
    return expected;                                                                     \
  }
RL_EMU_ATOMIC_CAS(int)
RL_EMU_ATOMIC_CAS(unsigned int)
RL_EMU_ATOMIC_CAS(unsigned long long)
RL_EMU_ATOMIC_CAS(unsigned short)
#undef RL_EMU_ATOMIC_CAS

// ((old >= limit) ? 0 : (old + 1)) and (((old == 0) || (old > limit)) ? limit : (old - 1)).
inline unsigned int atomicInc(unsigned int* address, unsigned int limit) {
  return rl::emu::detail::atomic_update(
      address, [limit](unsigned old) { return old >= limit ? 0u : old + 1u; });
}
inline unsigned int atomicDec(unsigned int* address, unsigned int limit) {
  return rl::emu::detail::atomic_update(
      address, [limit](unsigned old) { return (old == 0u || old > limit) ? limit : old - 1u; });
}

// Scoped atomics (sm_60+): the _block and _system forms have the operations
// and overloads of the device-scope ones.  Device scope is at least as strong
// as either here (device memory is host memory, coherent for every host
// thread), so they forward; a type atomicAdd lacks, _block lacks too.
#define RL_EMU_ATOMIC_SCOPES(name)                                   \
  template <typename... Args>                                        \
  inline auto name##_block(Args... args)->decltype(name(args...)) {  \
    return name(args...);                                            \
  }                                                                  \
  template <typename... Args>                                        \
  inline auto name##_system(Args... args)->decltype(name(args...)) { \
    return name(args...);                                            \
  }
RL_EMU_ATOMIC_SCOPES(atomicAdd)
RL_EMU_ATOMIC_SCOPES(atomicSub)
RL_EMU_ATOMIC_SCOPES(atomicExch)
RL_EMU_ATOMIC_SCOPES(atomicMin)
RL_EMU_ATOMIC_SCOPES(atomicMax)
RL_EMU_ATOMIC_SCOPES(atomicInc)
RL_EMU_ATOMIC_SCOPES(atomicDec)
RL_EMU_ATOMIC_SCOPES(atomicCAS)
RL_EMU_ATOMIC_SCOPES(atomicAnd)
RL_EMU_ATOMIC_SCOPES(atomicOr)
RL_EMU_ATOMIC_SCOPES(atomicXor)
#undef RL_EMU_ATOMIC_SCOPES
