// What the `roofline` subcommands share (internal): the one error type for
// bad usage, and the two views of the SKU table (skus, model).
#pragma once

#include "rl/roofline/cli.hpp"

#include <span>
#include <stdexcept>
#include <string>

namespace rl::roofline::cli_detail {

// Any bad input ends as one line on stderr and exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `roofline skus`: the datasheet table with the source of every row.
int run_skus();

// `roofline model`: the SKU's roofs and ridge points, and where each
// registered kernel lands; `json` for scripts.
int run_model(const std::string& key, bool json, std::span<const RegisteredKernel> registered,
              int sm_count_listed);

}  // namespace rl::roofline::cli_detail
