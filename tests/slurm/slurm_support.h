// Helpers of the Slurm hooks' unit tests: Slurm's environment as a map, and
// the recorded Slurm answers under tests/data/slurm.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "slurm/reservation_env.h"
#include "tests/support/files.h"

namespace basild::slurm {

using Env = std::map<std::string, std::string, std::less<>>;

// The environment `env` as a hook reads it.
inline Getenv from(Env env) {
  return [env = std::move(env)](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

// tests/data/slurm/NAME.txt (a test fails when it is missing or empty).
inline std::string fixture(const std::string& name) {
  const std::string text = basil_test::read_file(std::string(BASIL_TEST_DATA) + "/slurm/" + name + ".txt");
  EXPECT_FALSE(text.empty()) << name;
  return text;
}

}  // namespace basild::slurm
