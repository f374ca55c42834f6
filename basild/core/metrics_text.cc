#include "basild/core/metrics_text.h"

#include <cstdio>

namespace basild {

namespace {

// The text format's escapes: backslash and newline, and in a label value
// the double quote too.
void append_escaped(std::string& out, std::string_view text, bool quote) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

}  // namespace

Labels::Labels(std::initializer_list<std::pair<std::string_view, std::string_view>> pairs) {
  for (const auto& [name, value] : pairs) add(name, value);
}

Labels& Labels::add(std::string_view name, std::string_view value) {
  if (!inner_.empty()) inner_ += ',';
  inner_ += name;
  inner_ += "=\"";
  append_escaped(inner_, value, true);
  inner_ += '"';
  text_ = "{" + inner_ + "}";
  return *this;
}

std::string metric_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

MetricsText& MetricsText::family(std::string_view name, std::string_view type, std::string_view help) {
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  append_escaped(text_, help, false);
  text_ += '\n';
  text_ += "# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += type;
  text_ += '\n';
  return *this;
}

MetricsText& MetricsText::sample(std::string_view name, const Labels& labels, std::uint64_t value) {
  text_ += name;
  text_ += labels.text();
  text_ += ' ';
  text_ += std::to_string(value);
  text_ += '\n';
  return *this;
}

MetricsText& MetricsText::sample(std::string_view name, const Labels& labels, double value) {
  text_ += name;
  text_ += labels.text();
  text_ += ' ';
  text_ += metric_number(value);
  text_ += '\n';
  return *this;
}

MetricsText& MetricsText::counter(std::string_view name, std::uint64_t value, std::string_view help) {
  return family(name, "counter", help).sample(name, {}, value);
}

MetricsText& MetricsText::gauge(std::string_view name, std::uint64_t value, std::string_view help) {
  return family(name, "gauge", help).sample(name, {}, value);
}

}  // namespace basild
