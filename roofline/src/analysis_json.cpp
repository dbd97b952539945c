#include "analysis_json.hpp"

#include "results_json_values.hpp"

#include "rl/roofline/analysis.hpp"

#include <nlohmann/json.hpp>

namespace rl::roofline::results_json {

namespace {

template <class J>
J analysis_json_of(const Analysis& a) {
  J ladders = J::array();
  for (const GemmLadder& l : a.gemm_ladders) {
    J rungs = J::array();
    for (const LadderRung& r : l.rungs)
      rungs.push_back(J{{"name", r.name},
                        {"variant", r.variant},
                        {"precision", r.precision},
                        {"idea", r.idea},
                        {"library", r.library},
                        {"status", std::string(to_string(r.status))},
                        {"error", r.error},
                        {"flops_per_s", optional_number<J>(r.flops_per_s)},
                        {"pct_of_library", optional_number<J>(r.pct_of_library)},
                        {"library_reference", r.library_reference},
                        {"pct_of_roof", optional_number<J>(r.pct_of_roof)}});
    ladders.push_back(J{{"shape", shape_json<J>(l.shape)}, {"rungs", std::move(rungs)}});
  }
  J precision = J(nullptr);
  if (a.precision_ladder) {
    J steps = J::array();
    for (const PrecisionStep& s : a.precision_ladder->steps)
      steps.push_back(J{{"precision", s.precision},
                        {"kernel", s.kernel},
                        {"flops_per_s", optional_number<J>(s.flops_per_s)},
                        {"library", s.library},
                        {"library_flops_per_s", optional_number<J>(s.library_flops_per_s)},
                        {"roof_name", s.roof_name},
                        {"roof", optional_number<J>(s.roof)}});
    precision = J{{"shape", shape_json<J>(a.precision_ladder->shape)}, {"steps", std::move(steps)}};
  }
  J fusion = J::array();
  for (const AttentionFusion& f : a.attention_fusion) {
    J variants = J::array();
    for (const AttentionVariant& v : f.variants)
      variants.push_back(J{{"name", v.name},
                           {"precision", v.precision},
                           {"status", std::string(to_string(v.status))},
                           {"error", v.error},
                           {"naive", v.naive},
                           {"bytes_model", number_or_null<J>(v.bytes_model)},
                           {"intensity", number_or_null<J>(v.intensity)},
                           {"extra_traffic_share", number_or_null<J>(v.extra_traffic_share)},
                           {"time_s", optional_number<J>(v.time_s)},
                           {"flops_per_s", optional_number<J>(v.flops_per_s)},
                           {"pct_of_roof", optional_number<J>(v.pct_of_roof)},
                           {"device_bytes", optional_number<J>(v.device_bytes)},
                           {"bound", std::string(to_string(v.bound))},
                           {"roof_name", v.roof_name},
                           {"speedup", optional_number<J>(v.speedup)},
                           {"speedup_over", v.speedup_over}});
    J ladders_here = J::array();
    for (const AttentionLadder& l : f.ladders) {
      J steps = J::array();
      for (const AttentionStep& s : l.steps)
        steps.push_back(J{{"name", s.name},
                          {"precision", s.precision},
                          {"idea", s.idea},
                          {"library", s.library},
                          {"status", std::string(to_string(s.status))},
                          {"error", s.error},
                          {"bytes_min", number_or_null<J>(s.bytes_min)},
                          {"bytes_model", number_or_null<J>(s.bytes_model)},
                          {"intensity", number_or_null<J>(s.intensity)},
                          {"time_s", optional_number<J>(s.time_s)},
                          {"compared_with", s.compared_with},
                          {"bytes_factor", optional_number<J>(s.bytes_factor)},
                          {"speedup", optional_number<J>(s.speedup)},
                          {"pct_of_roof", optional_number<J>(s.pct_of_roof)},
                          {"roof_name", s.roof_name},
                          {"bound", std::string(to_string(s.bound))},
                          {"sentence", s.sentence}});
      ladders_here.push_back(
          J{{"precision", l.precision},
            {"missing_baseline", l.missing_baseline},
            {"missing_baseline_at_other_shapes", l.missing_baseline_at_other_shapes},
            {"steps", std::move(steps)}});
    }
    fusion.push_back(J{{"shape", shape_json<J>(f.shape)},
                       {"variants", std::move(variants)},
                       {"findings", f.findings},
                       {"ladders", std::move(ladders_here)}});
  }
  return J{{"gemm_ladders", std::move(ladders)},
           {"precision_ladder", std::move(precision)},
           {"attention_fusion", std::move(fusion)}};
}

}  // namespace

template <class J>
J analysis_json(const Results& results) {
  return analysis_json_of<J>(analyse(results));
}

template nlohmann::json analysis_json<nlohmann::json>(const Results&);
template nlohmann::ordered_json analysis_json<nlohmann::ordered_json>(const Results&);

}  // namespace rl::roofline::results_json
