// Typed, located access to a parsed results.json (internal): every reading
// error names where it is as a JSON pointer ("/kernels/3/time_s/median").
#pragma once

#include "rl/roofline/results_io.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace rl::roofline::results_json {

// Thrown inside the reader with "/pointer: problem"; the public entry points
// prefix the source name.
[[noreturn]] inline void fail(const std::string& pointer, std::string_view problem) {
  throw ResultsError(fmt::format("{}: {}", pointer.empty() ? "/" : pointer, problem));
}

inline std::string child(const std::string& pointer, std::string_view key) {
  std::string escaped;  // RFC 6901: '~' -> "~0", '/' -> "~1"
  for (char ch : key) {
    if (ch == '~')
      escaped += "~0";
    else if (ch == '/')
      escaped += "~1";
    else
      escaped += ch;
  }
  return pointer + "/" + escaped;
}

inline std::string child(const std::string& pointer, std::size_t index) {
  return pointer + "/" + std::to_string(index);
}

template <class J>
class Reader {
 public:
  Reader(const J& json, std::string pointer) : json_(json), pointer_(std::move(pointer)) {
    if (!json_.is_object())
      fail(pointer_, fmt::format("expected an object, got {}", type_of(json_)));
  }

  const std::string& pointer() const { return pointer_; }

  const J* find(std::string_view key) const {
    auto it = json_.find(std::string(key));
    return it == json_.end() ? nullptr : &*it;
  }

  const J& required(std::string_view key) const {
    const J* value = find(key);
    if (!value) fail(child(pointer_, key), "missing required key");
    return *value;
  }

  Reader object(std::string_view key) const { return Reader(required(key), child(pointer_, key)); }

  std::string string(std::string_view key) const { return as_string(required(key), key); }

  std::string optional_string(std::string_view key) const {
    const J* value = find(key);
    if (!value || value->is_null()) return {};
    return as_string(*value, key);
  }

  bool boolean(std::string_view key) const { return as_bool(required(key), key); }

  std::optional<bool> optional_boolean(std::string_view key) const {
    const J* value = find(key);
    if (!value || value->is_null()) return std::nullopt;
    return as_bool(*value, key);
  }

  double number(std::string_view key) const { return as_number(required(key), key); }

  double non_negative(std::string_view key) const {
    double value = number(key);
    if (value < 0) fail(child(pointer_, key), fmt::format("must be >= 0, got {}", value));
    return value;
  }

  // null reads as NaN: the writer's encoding of a non-finite value, where no
  // direction is implied (a rate or a byte count that could not be computed).
  double non_negative_or_nan(std::string_view key) const {
    if (required(key).is_null()) return std::numeric_limits<double>::quiet_NaN();
    return non_negative(key);
  }

  // null reads as +inf: the writer's encoding of a non-finite value.
  double number_null_is_infinite(std::string_view key) const {
    const J& value = required(key);
    if (value.is_null()) return std::numeric_limits<double>::infinity();
    return as_number(value, key);
  }

  std::optional<double> optional_number(std::string_view key) const {
    const J* value = find(key);
    if (!value || value->is_null()) return std::nullopt;
    return as_number(*value, key);
  }

  double number_or(std::string_view key, double fallback) const {
    return optional_number(key).value_or(fallback);
  }

  std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max) const {
    return as_integer(required(key), child(pointer_, key), min, max);
  }

  std::int64_t integer_or(std::string_view key, std::int64_t fallback, std::int64_t min,
                          std::int64_t max) const {
    const J* value = find(key);
    if (!value || value->is_null()) return fallback;
    return as_integer(*value, child(pointer_, key), min, max);
  }

  static std::string type_of(const J& value) { return std::string(value.type_name()); }

  static std::int64_t as_integer(const J& value, const std::string& where, std::int64_t min,
                                 std::int64_t max) {
    std::int64_t result = 0;
    if (value.is_number_unsigned()) {
      auto u = value.template get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(max))
        fail(where, fmt::format("integer {} out of range [{}, {}]", u, min, max));
      result = static_cast<std::int64_t>(u);
    } else if (value.is_number_integer()) {
      result = value.template get<std::int64_t>();
    } else {
      fail(where, fmt::format("expected an integer, got {}", describe(value)));
    }
    if (result < min || result > max)
      fail(where, fmt::format("integer {} out of range [{}, {}]", result, min, max));
    return result;
  }

  static double as_number_at(const J& value, const std::string& where) {
    if (!value.is_number()) fail(where, fmt::format("expected a number, got {}", describe(value)));
    double result = value.template get<double>();
    if (!std::isfinite(result)) fail(where, "number is not finite");
    return result;
  }

 private:
  static std::string describe(const J& value) {
    // A float where an integer belongs: say which, since 1e30 prints as a number.
    if (value.is_number_float()) return fmt::format("non-integer number {}", value.dump());
    return type_of(value);
  }

  std::string as_string(const J& value, std::string_view key) const {
    if (!value.is_string())
      fail(child(pointer_, key), fmt::format("expected a string, got {}", type_of(value)));
    return value.template get<std::string>();
  }

  bool as_bool(const J& value, std::string_view key) const {
    if (!value.is_boolean())
      fail(child(pointer_, key), fmt::format("expected true or false, got {}", type_of(value)));
    return value.template get<bool>();
  }

  double as_number(const J& value, std::string_view key) const {
    return as_number_at(value, child(pointer_, key));
  }

  const J& json_;
  std::string pointer_;
};

template <class J>
const J& array_at(const Reader<J>& parent, std::string_view key) {
  const J& value = parent.required(key);
  if (!value.is_array())
    fail(child(parent.pointer(), key),
         fmt::format("expected an array, got {}", Reader<J>::type_of(value)));
  return value;
}

// Results from a parsed document; throws ResultsError("/pointer: problem").
Results read_results(const nlohmann::json& json);
Results read_results(const nlohmann::ordered_json& json);

}  // namespace rl::roofline::results_json
