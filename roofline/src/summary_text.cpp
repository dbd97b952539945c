#include "rl/roofline/report.hpp"

#include "report_headline.hpp"

#include "rl/roofline/counter_agreement.hpp"
#include "rl/roofline/node_report.hpp"
#include "rl/roofline/text.hpp"

#include <algorithm>
#include <cstddef>

#include <fmt/format.h>

namespace rl::roofline {

namespace {

using report_detail::counters_text;
using report_detail::headline_facts;
using report_detail::noise_text;
using report_detail::throttling_text;

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (char ch : s) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

// `text` cut to `width` code points (the last one "…"), or padded to it.
std::string cell(std::string text, std::size_t width) {
  if (code_points(text) > width) {
    std::string out;
    std::size_t n = 0;
    for (std::size_t i = 0; i < text.size() && n + 1 < width; ++i) {
      out += text[i];
      if (i + 1 == text.size() || (static_cast<unsigned char>(text[i + 1]) & 0xC0) != 0x80) ++n;
    }
    return out + "…";
  }
  return text + std::string(width - code_points(text), ' ');
}

// Words joined into lines no wider than `width`, continuation lines indented.
std::string wrap(const std::string& text, std::size_t width) {
  std::string out, line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && code_points(line) + 1 + code_points(word) > width) {
      out += line + "\n";
      line = "  ";
    }
    line += (line.empty() || line == "  " ? "" : " ") + word;
  }
  return out + line + "\n";
}

}  // namespace

std::string render_summary_text(const Results& r, const ReportOptions& options, int columns) {
  const std::size_t width = static_cast<std::size_t>(std::max(columns, 60));
  const report_detail::Headline f = headline_facts(r, options);
  std::string s;
  s += wrap(fmt::format("{} · cc {} · {} SMs · backend {} · datasheet row: {}", f.device,
                        f.compute_capability, f.sm_count, f.backend,
                        f.sku.empty() ? "none (" + f.sku_reason + ")" : f.sku),
            width);
  if (f.emulator) s += wrap("CPU emulator — not GPU performance.", width);
  s += wrap(fmt::format("Kernels: {} validated and timed, {} failed, {} skipped (not run){}.", f.ok,
                        f.failed, f.skipped, f.other > 0 ? fmt::format(", {} other", f.other) : ""),
            width);
  if (!f.verdicts.empty() && f.emulator) {
    std::string values;
    for (const auto& v : f.verdicts)
      values += (values.empty() ? "" : ", ") + v.name + " " + v.measured;
    s += wrap("Ceilings (CPU emulator, no GPU claim applies): " + values + ".", width);
  } else {
    for (const auto& v : f.verdicts) {
      std::string against;
      for (const auto& a : v.against) against += (against.empty() ? "" : ", ") + a;
      s += wrap(v.word.empty()
                    ? fmt::format("{} {}: no datasheet or derived figure", v.name, v.measured)
                    : fmt::format("{} {}: {} ({})", v.name, v.measured, v.word, against),
                width);
    }
  }
  s += wrap(noise_text(f) + ".", width);
  s += wrap("Throttling: " + throttling_text(f) + ".", width);
  // Node links (issue 29): the report's verdict per link type.
  for (const auto& v : analyse_node(r, options.sku).verdicts)
    s += wrap(fmt::format("Link {}{}.", v.ok() ? "" : "FAILED: ", v.line), width);
  if (const std::string counters = counters_text(f); !counters.empty())
    s += wrap(counters + ".", width);
  for (const std::string& sentence : not_compared_sentences(r)) s += wrap(sentence, width);

  // name | shape | median | FLOP/s | bound, % of roof | status; the shape only
  // when the terminal is wide enough to keep 24 columns for the name.
  constexpr std::size_t kTime = 9, kRate = 12, kBound = 17, kStatus = 9, kShape = 20;
  const bool with_shape = width >= 24 + kShape + kTime + kRate + kBound + kStatus + 5;
  const std::size_t name_width =
      width - (kTime + kRate + kBound + kStatus + 4) - (with_shape ? kShape + 1 : 0);
  auto line = [&](std::string name, std::string shape, std::string time, std::string rate_text,
                  std::string bound, std::string status) {
    std::string l = cell(std::move(name), name_width) + " ";
    if (with_shape) l += cell(std::move(shape), kShape) + " ";
    l += cell(std::move(time), kTime) + " " + cell(std::move(rate_text), kRate) + " " +
         cell(std::move(bound), kBound) + " " + cell(std::move(status), kStatus);
    while (!l.empty() && l.back() == ' ') l.pop_back();
    return l + "\n";
  };
  s += "\n" + line("kernel", "shape", "median", "FLOP/s", "bound, % roof", "status");
  for (const auto& k : r.kernels) {
    std::string bound(k.bound == Bound::none ? "—" : to_string(k.bound));
    if (k.pct_of_roof) bound += fmt::format(" {:.0f}%", *k.pct_of_roof);
    std::string status(k.status == Status::ok && k.validated ? "ok"
                       : k.status == Status::none            ? "failed"
                                                             : to_string(k.status));
    s += line(k.name, shape_text(k.shape), k.time_s ? si(k.time_s->median) + "s" : "—",
              k.time_s && k.flops > 0 ? si(k.achieved_flops_per_s) + "FLOP/s" : "—", bound, status);
  }
  // Each kernel whose counts disagree with its cost model, with the sentence.
  std::string differ;
  for (const auto& k : r.kernels)
    if (k.counters)
      if (const CounterVerdict v = counter_verdict(*k.counters); v.disagrees)
        differ +=
            wrap(fmt::format("Counters differ: {} [{}]: {}.", k.name, shape_text(k.shape), v.text),
                 width);
  if (!differ.empty()) s += "\n" + differ;
  return s;
}

}  // namespace rl::roofline
