// The hierarchy view (internal to the chart), after Yang, Kurth and
// Williams' hierarchical roofline ("Hierarchical Roofline Analysis for GPUs:
// Accelerating Performance Optimization for the NERSC-9 Perlmutter System",
// Concurrency and Computation: Practice and Experience, 2020): each kernel that has counters is
// placed at its L1, L2 and DRAM intensities (flops over the bytes moved at that level) at its one
// achieved FLOP/s, against the L1/shared, L2 and DRAM roofs.  How far apart a kernel's points sit
// says how much each level reuses the data of the one below.
#pragma once

#include "chart_view.hpp"

#include "rl/roofline/results.hpp"

#include <string_view>
#include <vector>

namespace rl::roofline::chart {

// The levels `k` can be placed at, L1 first: counted bytes (counters values
// "l1_bytes", "l2_bytes", "dram_bytes_read" + "dram_bytes_write"; the
// emulator's l2_bytes only where the model declares both L2 figures), else
// the cost model's (L2: bytes_l2_load + bytes_l2_store when both are
// declared; DRAM: bytes_model), counted = false; a level with neither, or
// with no bytes, is left out.
std::vector<LevelPoint> memory_levels(const KernelResult& k);

// The marker of a level: L1 triangle, L2 square, DRAM circle.
std::string_view level_marker(std::string_view level);

// The view: each kernel with counts once (the overview's choice of
// instance), one colour each, every one labelled; roofs: the best measured
// smem.*, l2.* and DRAM ceilings and the compute roof of each unit drawn.
ViewSpec hierarchy_spec(const Results& r);

}  // namespace rl::roofline::chart
