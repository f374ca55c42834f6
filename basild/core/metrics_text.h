// The Prometheus text format (version 0.0.4), written in one place: every
// part of basild that has metrics adds its families to one MetricsText, so
// that the format, label escaping and number formatting are the same for
// all of them.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace basild {

// Label pairs, written {a="x",b="y"}; values are escaped as the format asks
// (backslash, double quote, newline), so that a configured name cannot
// break a line.
class Labels {
 public:
  Labels() = default;
  Labels(std::initializer_list<std::pair<std::string_view, std::string_view>> pairs);
  Labels& add(std::string_view name, std::string_view value);
  const std::string& text() const { return text_; }  // "" or "{...}"

 private:
  std::string inner_;
  std::string text_;
};

// Every family has its "# HELP" and "# TYPE" lines (promtool's rules, which
// scripts/packages.sh runs on a live basild), and a counter's name ends in
// _total.
class MetricsText {
 public:
  // A family's header: "# HELP", then "# TYPE".
  MetricsText& family(std::string_view name, std::string_view type, std::string_view help);
  MetricsText& sample(std::string_view name, const Labels& labels, std::uint64_t value);
  MetricsText& sample(std::string_view name, const Labels& labels, double value);
  // A family of one unlabelled sample.
  MetricsText& counter(std::string_view name, std::uint64_t value, std::string_view help);
  MetricsText& gauge(std::string_view name, std::uint64_t value, std::string_view help);

  const std::string& text() const { return text_; }
  std::string take() { return std::move(text_); }

 private:
  std::string text_;
};

// A double as the text format writes it (up to 9 significant digits).
std::string metric_number(double v);

}  // namespace basild
