// Helpers of the configuration parser's tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "basild/config/config.h"

namespace basild {

// The single error of a text that must have exactly one (a test fails
// otherwise, listing the text's errors).
inline ConfigError only_error(std::string_view text) {
  ConfigParse p = parse_config_all(text);
  EXPECT_EQ(p.errors.size(), 1u) << text << "\n" << [&] {
    std::string all;
    for (const auto& e : p.errors) all += e.to_string("t") + "\n";
    return all;
  }();
  return p.errors.empty() ? ConfigError{} : p.errors.front();
}

}  // namespace basild
