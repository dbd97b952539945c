// The order in which a persistent GEMM's CTAs walk the output tiles: grouped
// into bands of `band_rows` row tiles, numbered down each column of a band in
// turn (the last band may be narrower).  Consecutive tile numbers, which the
// CTAs running at once hold, then share a few A row panels and B column
// panels, not one row panel and every column panel (row-major order).
// Host and device: the kernel maps its tile numbers with it, a test checks
// that every tile appears once and what a wave of tiles touches.
#pragma once

#include "rl/cuda.hpp"

namespace rl::gemm {

struct TilePosition {
  int row_tile, col_tile;
};

struct GroupedTileOrder {
  int row_tiles, col_tiles, band_rows;

  __host__ __device__ constexpr int tiles() const { return row_tiles * col_tiles; }

  __host__ __device__ constexpr TilePosition position(int t) const {
    const int band_tiles = band_rows * col_tiles;
    const int first_row = (t / band_tiles) * band_rows, in_band = t % band_tiles;
    const int rows_here = row_tiles - first_row < band_rows ? row_tiles - first_row : band_rows;
    return {first_row + in_band % rows_here, in_band / rows_here};
  }
};

}  // namespace rl::gemm
