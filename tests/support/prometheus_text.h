// What promtool's `check metrics` asks of a Prometheus text (version 0.0.4)
// and basild's own rule, checked in-process on a MetricsText's output or a
// GET /metrics body: every sample's family declared before it with
// "# HELP" and "# TYPE" (a summary's _sum and _count, a histogram's
// _bucket, _sum and _count belong to it), each family once, and a
// counter's name ending in _total. scripts/packages.sh runs promtool itself
// on a live basild.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace basil_test {

// One line per problem, naming the metric; empty when the text is clean.
std::vector<std::string> prometheus_problems(std::string_view text);

}  // namespace basil_test
