#include "report_html.hpp"

#include "rl/roofline/counter_agreement.hpp"
#include "rl/roofline/model.hpp"
#include "rl/roofline/text.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

namespace rl::roofline::report_detail {

namespace {

std::string validation_text(const KernelResult& k) {
  if (std::isinf(k.max_rel_err)) return "not finite";
  return fmt::format("{:.2e}", k.max_rel_err);
}

// Sorting without a script: every row carries its rank in each sortable
// column as a CSS variable, a hidden radio button per column and direction
// sits before the table, and the checked one sets the flex `order` of the
// rows.  The header labels are the buttons.
struct Column {
  std::string title;
  bool numeric;
};

}  // namespace

std::string kernel_table(const Results& r) {
  const std::vector<Column> columns{{"kernel", false},
                                    {"precision (unit)", false},
                                    {"shape", false},
                                    {"median time", true},
                                    {"noise", true},
                                    {"FLOP/s", true},
                                    {"B/s", true},
                                    {"intensity FLOP/B", true},
                                    {"bound, % of roof", true},
                                    {"validation", false}};
  const std::size_t n = r.kernels.size();
  // Sort keys: numbers (absent ones last) or text.
  std::vector<std::vector<std::pair<double, std::string>>> keys(
      columns.size(), std::vector<std::pair<double, std::string>>(n));
  constexpr double kAbsent = std::numeric_limits<double>::infinity();
  bool robust = false;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& k = r.kernels[i];
    const bool timed = k.time_s.has_value();
    keys[0][i] = {0, k.name};
    keys[1][i] = {0, fmt::format("{} {}", to_string(k.precision), compute_unit_name(k.unit))};
    keys[2][i] = {0, shape_text(k.shape)};
    keys[3][i] = {timed ? k.time_s->median : kAbsent, ""};
    keys[4][i] = {kernel_noise(k, robust).value_or(kAbsent), ""};
    keys[5][i] = {timed ? k.achieved_flops_per_s : kAbsent, ""};
    keys[6][i] = {timed ? k.achieved_bytes_per_s : kAbsent, ""};
    keys[7][i] = {intensity(k.flops, k.bytes_model), ""};
    keys[8][i] = {k.pct_of_roof.value_or(kAbsent), ""};
    keys[9][i] = {k.validated ? k.max_rel_err : kAbsent, std::string(to_string(k.status))};
  }
  std::vector<std::vector<std::size_t>> rank(columns.size(), std::vector<std::size_t>(n));
  for (std::size_t c = 0; c < columns.size(); ++c) {
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return keys[c][a] < keys[c][b]; });
    for (std::size_t pos = 0; pos < n; ++pos) rank[c][order[pos]] = pos;
  }

  std::string h;
  std::string css;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    h += fmt::format(
        "<input type=\"radio\" name=\"kernel-sort\" class=\"sortkey\" id=\"ks{0}a\">"
        "<input type=\"radio\" name=\"kernel-sort\" class=\"sortkey\" id=\"ks{0}d\">\n",
        c);
    css += fmt::format(
        "#ks{0}a:checked~.ktable .kb{{order:var(--k{0})}}"
        "#ks{0}d:checked~.ktable .kb{{order:calc(-1*var(--k{0}))}}\n",
        c);
  }
  h = "<style>" + css + "</style>\n" + h;
  h += "<div class=\"ktable\" role=\"table\">\n<div class=\"kr kh\" role=\"row\">";
  for (std::size_t c = 0; c < columns.size(); ++c)
    h += fmt::format(
        "<div role=\"columnheader\"><label for=\"ks{0}a\" title=\"sort ascending\">{1}</label> "
        "<label for=\"ks{0}d\" title=\"sort descending\">▾</label></div>",
        c, esc(columns[c].title));
  h += "</div>\n";
  for (std::size_t i = 0; i < n; ++i) {
    const auto& k = r.kernels[i];
    // Results written before ceilings existed carry no roof: judge them here
    // against the file's own ceilings (what apply_roofline would have filled).
    RoofVerdict verdict{k.roof, k.pct_of_roof, k.bound, k.memory_roof};
    if (!k.roof && k.bound == Bound::none)
      verdict = judge(k, r.ceilings, static_cast<double>(r.context.device.l2_bytes));
    std::string style;
    for (std::size_t c = 0; c < columns.size(); ++c)
      style += fmt::format("--k{}:{};", c, rank[c][i]);
    std::string time = "not timed", spread;
    if (k.time_s) {
      time = si(k.time_s->median) + "s";
      spread = fmt::format("{}s – {}s, n={}", si(k.time_s->min), si(k.time_s->max),
                           k.time_s->repetitions);
    }
    bool robust_here = false;
    auto noise = kernel_noise(k, robust_here);
    // A skip is not a failure: its reason is a hover title, kept short in the cell.
    std::string validation;
    if (k.validated)
      validation = "passed, " + validation_text(k);
    else if (k.status == Status::skipped)
      validation = fmt::format("<span class=\"muted\" title=\"{}\">skipped{}</span>", esc(k.error),
                               k.error.empty() ? "" : " (hover for why)");
    else
      validation = fmt::format(
          "<span class=\"bad\">{}</span> <small>{}</small>",
          esc(k.status == Status::none ? "failed" : to_string(k.status)),
          esc(fmt::format("({}{})", validation_text(k), k.error.empty() ? "" : "; " + k.error)));
    // Flagged beside the name like throttling; the sentence is its hover title
    // and the counters section's row.
    std::string flags = k.throttled ? " <span class=\"bad\">(throttled)</span>" : "";
    if (k.counters)
      if (const CounterVerdict v = counter_verdict(*k.counters); v.disagrees)
        flags +=
            fmt::format(" <span class=\"bad\" title=\"{}\">(counters differ)</span>", esc(v.text));
    const double ai = intensity(k.flops, k.bytes_model), ai_min = intensity(k.flops, k.bytes_min);
    std::string ai_text = fmt::format("{:.3g}", ai);
    if (std::abs(ai - ai_min) > 1e-9 * std::max(1.0, ai))
      ai_text += fmt::format(" <small>({:.3g} vs bytes_min)</small>", ai_min);
    std::string bound = verdict.bound == Bound::none ? "—" : esc(to_string(verdict.bound));
    if (verdict.pct_of_roof) bound += fmt::format(", {:.1f}%", *verdict.pct_of_roof);
    if (!verdict.memory_roof.empty())
      bound += " <small>vs " + esc(verdict.memory_roof) + "</small>";
    h += fmt::format(
        "<div class=\"kr kb\" role=\"row\" style=\"{}\"><div>{}{}<br><small>{} / "
        "{}</small></div><div>{} <small>({})</small></div><div>{}</div><div class=\"num\" "
        "title=\"{}\">{}</div><div class=\"num\">{}</div><div class=\"num\">{}</div><div "
        "class=\"num\">{}</div><div class=\"num\">{}</div><div>{}</div><div>{}</div></div>\n",
        style, breakable(k.name), flags, esc(k.family), esc(k.variant), esc(to_string(k.precision)),
        esc(compute_unit_name(k.unit)), breakable(shape_text(k.shape)), esc(spread), esc(time),
        noise ? fmt::format("{:.2f}%", 100 * *noise) : "—",
        k.time_s ? rate(k.achieved_flops_per_s, "FLOP/s") : "—",
        k.time_s ? rate(k.achieved_bytes_per_s, "B/s") : "—", ai_text, bound, validation);
  }
  h += "</div>\n";
  return h;
}

}  // namespace rl::roofline::report_detail
