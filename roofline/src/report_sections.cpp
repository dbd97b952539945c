#include "report_html.hpp"

#include "rl/roofline/model.hpp"
#include "rl/roofline/svg.hpp"
#include "rl/roofline/text.hpp"

#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>

namespace rl::roofline::report_detail {

namespace {

std::string pct_text(const std::optional<double>& pct) {
  return pct ? fmt::format("{:.1f}%", *pct) : "—";
}

std::string status_cell(Status status, const std::string& error) {
  if (status == Status::ok) return "ok";
  return fmt::format("<span class=\"bad\">{}</span>{}",
                     esc(status == Status::none ? "—" : to_string(status)),
                     error.empty() ? "" : ": " + esc(error));
}

std::string inline_svg(const Results& r, const std::string& view) {
  ChartOptions options;
  options.view = view;
  std::string svg = render_roofline_svg(r, options);
  if (auto end = svg.find("?>"); svg.starts_with("<?xml") && end != std::string::npos)
    svg.erase(0, end + 3);
  return svg;
}

constexpr int kAttentionColumns = 11;

// A speed-up cell: "over" names the reference; under 1 is said as slower.
std::string speedup_cell(const std::optional<double>& speedup, const std::string& over) {
  const std::string title = over.empty() ? "" : " title=\"over " + esc(over) + "\"";
  if (!speedup) return "<td class=\"num\"" + title + ">—</td>";
  return fmt::format("<td class=\"num\"{}>{}</td>", title,
                     *speedup < 1
                         ? fmt::format("<span class=\"slower\">{:.2f}× (slower)</span>", *speedup)
                         : fmt::format("{:.2f}×", *speedup));
}

// The name (marked naive) and precision cells every attention row starts with.
std::string variant_cell(const AttentionVariant& v) {
  return fmt::format("<td>{}{}</td><td>{}</td>", esc(v.name),
                     v.naive ? " <span class=\"muted\">(naive)</span>" : "", esc(v.precision));
}

// One variant's row, with the speed-up its place gives it (a ladder's step,
// or the fastest naive variant as reference); % of roof is of its own roof,
// named beside it.
std::string attention_row(const AttentionVariant& v, const std::optional<double>& speedup,
                          const std::string& over) {
  return fmt::format(
      "<tr>{}<td class=\"num\">{}B</td><td class=\"num\">{:.0f}%</td><td "
      "class=\"num\">{:.3g}</td><td class=\"num\">{}</td>{}<td class=\"num\">{}</td><td "
      "class=\"num\">{}{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
      variant_cell(v), esc(si(v.bytes_model)), 100.0 * v.extra_traffic_share, v.intensity,
      v.time_s ? esc(si(*v.time_s) + "s") : "—", speedup_cell(speedup, over),
      rate(v.flops_per_s, "FLOP/s"), pct_text(v.pct_of_roof),
      v.pct_of_roof && !v.roof_name.empty() ? " <small>of " + esc(v.roof_name) + "</small>" : "",
      v.device_bytes ? esc(si(*v.device_bytes) + "B") : "—", status_cell(v.status, v.error));
}

std::string group_row(const std::string& text) {
  return fmt::format("<tr><th colspan=\"{}\">{}</th></tr>\n", kAttentionColumns, text);
}

// One shape: the table (each ladder's steps in order, then the variants on
// no ladder), each ladder's story, one sentence per step, then the findings.
std::string attention_shape(const AttentionFusion& f) {
  std::string h = fmt::format(
      "<h3>{}</h3>\n<table class=\"attention\">\n<tr><th>variant</th><th>precision</th><th>bytes "
      "(model)</th><th>beyond Q,K,V,O</th><th>intensity FLOP/B</th><th>median time</th><th>"
      "speed-up</th><th>FLOP/s</th><th>% of roof</th><th>footprint"
      "</th><th>status</th></tr>\n",
      esc(shape_text(f.shape)));
  auto variant = [&](const std::string& name) -> const AttentionVariant* {
    for (const AttentionVariant& v : f.variants)
      if (v.name == name) return &v;
    return nullptr;
  };
  // A record on several ladders (the fp32 rungs every ladder starts with)
  // has its numbers once; the later ladders point back to that row.
  std::map<std::string, std::string> first_ladder;
  for (const AttentionLadder& l : f.ladders) {
    h += group_row(esc(l.precision) + " ladder");
    for (const AttentionStep& s : l.steps) {
      const AttentionVariant* v = variant(s.name);
      if (!v) continue;
      if (const auto [it, first] = first_ladder.emplace(s.name, l.precision); !first)
        h += fmt::format(
            "<tr>{}<td colspan=\"{}\" class=\"muted\">as in the {} ladder above</td></tr>\n",
            variant_cell(*v), kAttentionColumns - 2, esc(it->second));
      else
        h += attention_row(*v, s.speedup, s.compared_with);
    }
  }
  bool others = false;
  for (const AttentionVariant& v : f.variants) {
    if (first_ladder.count(v.name)) continue;
    if (!others && !f.ladders.empty()) h += group_row("on no ladder");
    others = true;
    h += attention_row(v, v.speedup, v.speedup_over);
  }
  h += "</table>\n";
  for (const AttentionLadder& l : f.ladders) {
    h += fmt::format("<p>The {} ladder, step by step:</p>\n<ol class=\"story\">\n",
                     esc(l.precision));
    for (const AttentionStep& s : l.steps) h += "<li>" + esc(s.sentence) + "</li>\n";
    h += "</ol>\n";
  }
  if (!f.findings.empty()) {
    h += "<ul class=\"findings\">\n";
    for (const std::string& finding : f.findings) h += "<li>" + esc(finding) + "</li>\n";
    h += "</ul>\n";
  }
  return h;
}
}  // namespace

// The GEMM ladder (one table per shape, like SGEMM_CUDA's README table), the
// precision ladder, and why fusion beats naive attention (analysis.hpp).
std::string analysis_sections(const Analysis& a) {
  std::string h;
  if (!a.gemm_ladders.empty()) {
    h += "<h2>GEMM ladder</h2>\n<p class=\"muted\">Each rung changes one thing from the one "
         "above it. % of library: against the fastest library record (cuBLAS / cuBLASLt) of the "
         "same precision at the same shape, where one was timed.</p>\n";
    for (const GemmLadder& l : a.gemm_ladders) {
      h += fmt::format(
          "<h3>{}</h3>\n<table class=\"ladder\">\n<tr><th>rung</th><th>what it "
          "adds</th><th>precision</th><th>FLOP/s</th><th>% of library</th><th>% of "
          "roof</th><th>status</th></tr>\n",
          esc(shape_text(l.shape)));
      for (const LadderRung& r : l.rungs)
        h += fmt::format(
            "<tr><td>{}{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td "
            "class=\"num\"{}>{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
            esc(r.name),
            r.library.empty() ? "" : " <span class=\"muted\">(" + esc(r.library) + ")</span>",
            esc(r.idea.empty() ? "—" : r.idea), esc(r.precision), rate(r.flops_per_s, "FLOP/s"),
            r.library_reference.empty() ? "" : " title=\"of " + esc(r.library_reference) + "\"",
            pct_text(r.pct_of_library), pct_text(r.pct_of_roof), status_cell(r.status, r.error));
      h += "</table>\n";
    }
  }
  if (a.precision_ladder) {
    h += fmt::format(
        "<h2>Precision ladder ({})</h2>\n<p class=\"muted\">The fastest "
        "hand-written kernel and library record of each precision at one shape, "
        "beside that precision's measured compute roof: the steps between roofs are "
        "what lower precision buys.</p>\n<table class=\"precision\">\n<tr><th>"
        "precision</th><th>fastest kernel</th><th>FLOP/s</th><th>library</th><th>"
        "FLOP/s</th><th>compute roof</th></tr>\n",
        esc(shape_text(a.precision_ladder->shape)));
    for (const PrecisionStep& s : a.precision_ladder->steps)
      h += fmt::format(
          "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td "
          "class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
          esc(s.precision), esc(s.kernel.empty() ? "—" : s.kernel), rate(s.flops_per_s, "FLOP/s"),
          esc(s.library.empty() ? "—" : s.library), rate(s.library_flops_per_s, "FLOP/s"),
          s.roof ? esc(s.roof_name) + " " + rate(s.roof, "FLOP/s")
                 : esc(s.roof_name.empty() ? "—" : s.roof_name + " not measured"));
    h += "</table>\n";
  }
  if (!a.attention_fusion.empty()) {
    h += "<h2>Why fusion beats naive attention</h2>\n<p class=\"muted\">Bytes are the cost "
         "model's (results.json <code>bytes_model</code>). Beyond Q, K, V, O: for a naive "
         "variant the share of its traffic that is S and P written and read back; for a fused "
         "one, the K/V re-reads per query tile. Footprint: the device memory the instance "
         "declares. Each ladder climbs the records' declared baselines to the top rung of one "
         "precision, then the library's fused record: there a step's speed-up is over the step "
         "below it that ran; elsewhere over the fastest naive variant. % of roof: of the roof "
         "each record was judged against (its own unit's, named beside it), as in the kernel "
         "table; a record on several ladders has its numbers in the first.";
    if (a.emulator)
      h += " These are CPU-emulator times: the bytes and intensities hold, the speed-ups and "
           "roof percentages do not.";
    h += "</p>\n";
    for (const AttentionFusion& f : a.attention_fusion) h += attention_shape(f);
  }
  return h;
}

// Fusion is a declared pair (a record's `fuses` names the unfused reference),
// never a ladder's rung and its baseline: those are in the ladder section.
std::string fusion_section(const Results& r) {
  std::string rows;
  for (const auto& fused : r.kernels) {
    if (fused.fuses.empty()) continue;
    for (const auto& unfused : r.kernels) {
      if (unfused.name != fused.fuses || unfused.shape != fused.shape) continue;
      std::string speedup = "—";
      if (fused.time_s && unfused.time_s && fused.time_s->median > 0) {
        const double s = unfused.time_s->median / fused.time_s->median;
        speedup = s < 1 ? fmt::format(
                              "<span class=\"slower\">{:.2f}× (the fused kernel is "
                              "slower here)</span>",
                              s)
                        : fmt::format("{:.2f}×", s);
      }
      const double saved =
          unfused.bytes_model > 0 ? 1 - fused.bytes_model / unfused.bytes_model : 0.0;
      rows += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}B → {}B ({:.0f}% less; "
          "compulsory {}B)</td><td class=\"num\">{:.3g} → {:.3g}</td><td class=\"num\">{} → "
          "{}</td><td class=\"num\">{}</td></tr>\n",
          breakable(unfused.name), breakable(fused.name), breakable(shape_text(fused.shape)),
          esc(si(unfused.bytes_model)), esc(si(fused.bytes_model)), 100 * saved,
          esc(si(fused.bytes_min)), intensity(unfused.flops, unfused.bytes_model),
          intensity(fused.flops, fused.bytes_model),
          unfused.time_s ? esc(si(unfused.time_s->median) + "s") : "not timed",
          fused.time_s ? esc(si(fused.time_s->median) + "s") : "not timed", speedup);
    }
  }
  std::string h = "<h2>Fusion</h2>\n";
  if (rows.empty())
    return h +
           "<p class=\"muted\">No declared fusion pairs in this run (a record declares "
           "one with <code>fuses</code>, naming the unfused kernel it replaces).</p>\n";
  h += "<p class=\"muted\">Each fused kernel beside the unfused kernels it replaces, at the same "
       "shape: bytes are the cost model's (<code>bytes_model</code>), so the saving is the "
       "traffic fusion removes; speed-up = unfused median time / fused median time.";
  if (r.context.backend == Backend::emulator)
    h += " These are CPU-emulator times: the byte savings hold, the speed-ups do not.";
  h += "</p>\n<table class=\"fusion\">\n<tr><th>unfused</th><th>fused</th><th>shape</th><th>"
       "bytes moved (model)</th><th>intensity FLOP/B</th><th>median time</th><th>speed-up"
       "</th></tr>\n" +
       rows + "</table>\n";
  return h;
}

std::string ladder_section(const Results& r) {
  const auto steps = ladder_steps(r);
  if (steps.empty()) return {};
  std::string h =
      "<h2>Ladders: what each rung buys</h2>\n<p class=\"muted\">Each rung against the rung "
      "below it (its <code>baseline</code>) at the same shape: gain = baseline median time / "
      "rung median time. A gain under 1 means the rung is slower there.";
  if (r.context.backend == Backend::emulator)
    h += " These are CPU-emulator times: the gains describe the emulator, not a GPU.";
  h += "</p>\n";
  std::string family;
  ShapeDims shape;
  bool open = false;
  for (const auto& s : steps) {
    if (!open || s.family != family || s.shape != shape) {
      if (open) h += "</table>\n";
      family = s.family;
      shape = s.shape;
      h += fmt::format(
          "<h3>{} at {}</h3>\n<table class=\"ladder-steps\">\n<tr><th>rung</th><th>baseline</th>"
          "<th>what it changes</th><th>precision</th><th>baseline time</th><th>rung "
          "time</th><th>gain</th></tr>\n",
          esc(family), esc(shape_text(shape)));
      open = true;
    }
    std::string gain = "—";
    if (s.gain)
      gain = *s.gain < 1 ? fmt::format("<span class=\"slower\">{:.2f}× (slower)</span>", *s.gain)
                         : fmt::format("{:.2f}×", *s.gain);
    h += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
        esc(s.rung), esc(s.baseline), esc(s.idea.empty() ? "—" : s.idea), esc(s.precision),
        s.baseline_time_s ? esc(si(*s.baseline_time_s) + "s") : "not timed",
        s.rung_time_s ? esc(si(*s.rung_time_s) + "s") : "not timed", gain);
  }
  if (open) h += "</table>\n";
  return h;
}

std::string charts_section(const Results& r) {
  std::string h =
      "<h2>Roofline charts</h2>\n<p class=\"muted\">One question per chart. A kernel "
      "is drawn against the roof of the unit it runs on, in that unit's colour; "
      "solid roofs are measured, dotted ones the datasheet's; whiskers span the "
      "fastest and slowest repetition; hover a point for its numbers.</p>\n";
  h += "<figure class=\"chart\" id=\"chart-overview\"><figcaption>Where does every kernel "
       "stand against its roof?</figcaption>\n" +
       inline_svg(r, "overview") + "</figure>\n";
  for (const auto& view : chart_views(r)) {
    std::string id;
    for (char ch : view.id) id += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '-';
    h += fmt::format("<figure class=\"chart\" id=\"chart-{}\"><figcaption>{}</figcaption>\n", id,
                     esc(view.question)) +
         inline_svg(r, view.id) + "</figure>\n";
  }
  return h;
}

std::string left_out_section(const Results& r) {
  const auto& left_out = r.run.left_out;
  if (left_out.empty()) return "";
  // A budget-limited run on a GPU can leave hundreds out: the first ones in
  // run order (the most important not measured) are listed, the rest counted.
  constexpr std::size_t kListed = 100;
  std::string h = fmt::format(
      "<h2>Not measured</h2>\n<p>{} instance(s) the run selected were not measured, in the "
      "order the run would have measured them.</p>\n<table>\n<tr><th>kernel</th><th>shape</th>"
      "<th>why</th></tr>\n",
      left_out.size());
  for (std::size_t i = 0; i < left_out.size() && i < kListed; ++i)
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", esc(left_out[i].name),
                     esc(shape_text(left_out[i].shape)), esc(to_string(left_out[i].reason)));
  h += "</table>\n";
  if (left_out.size() > kListed)
    h += fmt::format("<p class=\"muted\">and {} more (results.json run.left_out).</p>\n",
                     left_out.size() - kListed);
  return h;
}

}  // namespace rl::roofline::report_detail
