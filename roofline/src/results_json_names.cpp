#include "results_json_names.hpp"

#include "results_json_reader.hpp"

#include <cstddef>
#include <optional>

#include <fmt/format.h>

namespace rl::roofline {

namespace {

template <class E>
struct Spelling {
  E state;
  std::string_view json;
};

// In the order the reader's error message lists them.
constexpr std::array<Spelling<Backend>, 2> kBackends{{
    {Backend::cuda, "cuda"},
    {Backend::emulator, "emulator"},
}};
constexpr std::array<Spelling<Status>, 5> kStatuses{{
    {Status::ok, "ok"},
    {Status::failed_validation, "failed_validation"},
    {Status::error, "error"},
    {Status::skipped, "skipped"},
    {Status::none, ""},
}};
constexpr std::array<Spelling<Bound>, 5> kBounds{{
    {Bound::memory, "memory"},
    {Bound::compute, "compute"},
    {Bound::below_both, "below_both"},
    {Bound::above_roof, "above_roof"},
    {Bound::none, ""},
}};

constexpr std::array<Spelling<CounterSource>, 2> kCounterSources{{
    {CounterSource::cupti, "cupti"},
    {CounterSource::emulator, "emulator"},
}};

constexpr std::array<Spelling<CounterQuantity>, 6> kCounterQuantities{{
    {CounterQuantity::dram_bytes, "dram_bytes"},
    {CounterQuantity::l2_bytes, "l2_bytes"},
    {CounterQuantity::l2_load_bytes, "l2_load_bytes"},
    {CounterQuantity::l2_store_bytes, "l2_store_bytes"},
    {CounterQuantity::tensor_ops, "tensor_ops"},
    {CounterQuantity::flops, "flops"},
}};

constexpr std::array<Spelling<LeftOutReason>, 2> kLeftOutReasons{{
    {LeftOutReason::interrupted, "interrupted"},
    {LeftOutReason::budget, "not reached: budget"},
}};

template <class E, std::size_t N>
std::string_view spelling(const std::array<Spelling<E>, N>& table, E state) {
  for (const auto& s : table)
    if (s.state == state) return s.json;
  return "";  // not an enumerator: cast from an int out of range
}

// The state `value` spells in `table`; nullopt for a spelling it lacks.
template <class E, std::size_t N>
std::optional<E> spelled(const std::array<Spelling<E>, N>& table, std::string_view value) {
  for (const auto& s : table)
    if (s.json == value) return s.state;
  return std::nullopt;
}

template <class E, std::size_t N>
E parse(const std::array<Spelling<E>, N>& table, const std::string& pointer,
        const std::string& value) {
  if (const std::optional<E> state = spelled(table, value)) return *state;
  std::array<std::string_view, N> names;
  for (std::size_t i = 0; i < N; ++i) names[i] = table[i].json;
  results_json::require_one_of(pointer, value, names);  // throws: value is none of them
  return table[0].state;
}

}  // namespace

std::string_view to_string(Backend backend) {
  return spelling(kBackends, backend);
}
std::string_view to_string(Status status) {
  return spelling(kStatuses, status);
}
std::string_view to_string(Bound bound) {
  return spelling(kBounds, bound);
}
std::string_view to_string(LeftOutReason reason) {
  return spelling(kLeftOutReasons, reason);
}
std::string_view to_string(CounterSource source) {
  return spelling(kCounterSources, source);
}
std::string_view to_string(CounterQuantity quantity) {
  return spelling(kCounterQuantities, quantity);
}

ResultCounterQuantity ResultCounterQuantity::from_json(std::string_view spelling) {
  if (const std::optional<CounterQuantity> known = spelled(kCounterQuantities, spelling))
    return *known;
  ResultCounterQuantity other;
  other.unknown_ = std::string(spelling);
  return other;
}

namespace results_json {

void require_one_of(const std::string& pointer, const std::string& value,
                    std::span<const std::string_view> allowed) {
  for (auto a : allowed)
    if (value == a) return;
  std::string list;
  for (auto a : allowed) list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", a);
  fail(pointer, fmt::format("\"{}\" is not one of {}", value, list));
}

Backend parse_backend(const std::string& pointer, const std::string& value) {
  return parse(kBackends, pointer, value);
}
Status parse_status(const std::string& pointer, const std::string& value) {
  return parse(kStatuses, pointer, value);
}
Bound parse_bound(const std::string& pointer, const std::string& value) {
  return parse(kBounds, pointer, value);
}
LeftOutReason parse_left_out_reason(const std::string& pointer, const std::string& value) {
  return parse(kLeftOutReasons, pointer, value);
}
CounterSource parse_counter_source(const std::string& pointer, const std::string& value) {
  return parse(kCounterSources, pointer, value);
}

}  // namespace results_json

}  // namespace rl::roofline
