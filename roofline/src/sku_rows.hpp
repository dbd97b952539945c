// The SKU table's rows, one file per GPU generation; sku.cpp joins them in
// listing order (Turing to Ada, Blackwell RTX, Hopper, Blackwell datacenter)
// and holds the lookup, the matching and the derived peaks.
//
// Every figure in the rows is transcribed from the document named in the
// row's `source`; `note` says how it was converted.  Nothing is interpolated.
// One field per line, named; a field left out keeps its default (no tensor
// clock note, not a GeForce tensor rate, no excluded name words).
#pragma once

#include "rl/roofline/sku.hpp"

#include <initializer_list>
#include <utility>
#include <vector>

namespace rl::roofline::sku_rows {

inline constexpr double kTera = 1e12;
inline constexpr double kMiB = 1024.0 * 1024.0;

using U = ComputeUnit;

// Figures in TFLOP/s (TOP/s for INT8), stored in FLOP/s.
Peaks tflops(std::initializer_list<std::pair<ComputeUnit, double>> figures);

void add_turing_ampere_ada(std::vector<Sku>& rows);     // T4, A100, A10(G), L4, L40S, RTX 3090/4090
void add_blackwell_rtx(std::vector<Sku>& rows);         // compute capability 12.x
void add_hopper(std::vector<Sku>& rows);                // H100, H200
void add_blackwell_datacenter(std::vector<Sku>& rows);  // compute capability 10.x
// NVLink, PCIe and NVLink-C2C figures of the rows above (sku_links.cpp).
void add_links(std::vector<Sku>& rows);

}  // namespace rl::roofline::sku_rows
