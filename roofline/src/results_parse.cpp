#include "results_json_reader.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace rl::roofline {

namespace {

struct TextPosition {
  std::size_t line = 1, column = 1;
};

TextPosition position_of(std::string_view text, std::size_t byte) {
  TextPosition p;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

// Error text must stay on one line and printable whatever the input held.
std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char ch : s) out += (ch >= 0x20 && ch < 0x7f) ? static_cast<char>(ch) : '?';
  return out;
}

// Rejects documents nested deeper than kMaxResultsJsonDepth before the
// parser sees them, so hostile input cannot exhaust the stack anywhere.
void check_depth(std::string_view text, std::string_view source) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (ch == '\\')
        escaped = true;
      else if (ch == '"')
        in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      if (++depth > kMaxResultsJsonDepth) {
        auto p = position_of(text, i);
        throw ResultsError(
            fmt::format("{}: JSON nested deeper than {} levels at line {}, column {}", source,
                        kMaxResultsJsonDepth, p.line, p.column));
      }
    } else if (ch == ']' || ch == '}') {
      --depth;
    }
  }
}

// nlohmann's DOM builder, plus the byte position of a syntax error (which the
// exception for e.g. number overflow does not carry).
class PositionedDomParser : public nlohmann::json_sax<nlohmann::ordered_json> {
 public:
  using J = nlohmann::ordered_json;
  explicit PositionedDomParser(J& result) : dom_(result, false) {}

  bool null() override { return dom_.null(); }
  bool boolean(bool v) override { return dom_.boolean(v); }
  bool number_integer(number_integer_t v) override { return dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) override { return dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) override {
    return dom_.number_float(v, s);
  }
  bool string(string_t& v) override { return dom_.string(v); }
  bool binary(binary_t& v) override { return dom_.binary(v); }
  bool start_object(std::size_t n) override { return dom_.start_object(n); }
  bool key(string_t& v) override { return dom_.key(v); }
  bool end_object() override { return dom_.end_object(); }
  bool start_array(std::size_t n) override { return dom_.start_array(n); }
  bool end_array() override { return dom_.end_array(); }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) override {
    error_byte = position;
    error = ex.what();
    return false;
  }

  std::size_t error_byte = 0;
  std::string error;

 private:
  nlohmann::detail::json_sax_dom_parser<J> dom_;
};

// "[json.exception.parse_error.101] parse error at line 1, column 5: syntax
// error ..." -> "syntax error ..." (we print our own position).
std::string strip_nlohmann_prefix(const std::string& what) {
  std::string_view s = what;
  if (auto bracket = s.find("] "); bracket != std::string_view::npos) s.remove_prefix(bracket + 2);
  if (auto column = s.find("column "); column != std::string_view::npos) {
    if (auto colon = s.find(": ", column); colon != std::string_view::npos)
      s.remove_prefix(colon + 2);
  } else if (s.starts_with("parse error: ")) {
    s.remove_prefix(13);
  }
  return std::string(s);
}

}  // namespace

Results parse_results(std::string_view text, std::string_view source_name) {
  check_depth(text, source_name);
  nlohmann::ordered_json json;
  PositionedDomParser parser(json);
  bool ok = nlohmann::ordered_json::sax_parse(text, &parser);
  if (!ok) {
    // The SAX position counts characters read, i.e. one past the offender.
    std::size_t byte = parser.error_byte > 0 ? parser.error_byte - 1 : 0;
    auto p = position_of(text, byte);
    throw ResultsError(fmt::format("{}: malformed JSON at line {}, column {} (byte {}): {}",
                                   source_name, p.line, p.column, byte,
                                   printable(strip_nlohmann_prefix(parser.error))));
  }
  try {
    return results_json::read_results(json);
  } catch (const ResultsError& e) {
    throw ResultsError(fmt::format("{}: {}", source_name, printable(e.what())));
  }
}

Results load_results(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ResultsError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ResultsError(fmt::format("{}: read error", path.string()));
  return parse_results(text.str(), path.string());
}

}  // namespace rl::roofline
