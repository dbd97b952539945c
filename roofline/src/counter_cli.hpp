// `roofline counters` (internal to the CLI): the counter plan of chips, as a
// table or JSON.
#pragma once

#include <string>

namespace rl::roofline::cli_detail {

// `chip`: a CUPTI chip name (any case) or "all" (every chip the SKU table
// names); `sku`: a SKU key, planned for its row's chip.  Exactly one is set.
// Bad input throws UsageError (one line, exit 2), as does a build without CUPTI.
int run_counters(const std::string& chip, const std::string& sku, bool json);

}  // namespace rl::roofline::cli_detail
