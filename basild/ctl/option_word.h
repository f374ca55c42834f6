// One word of a subcommand's command line: "--opt=VALUE" split at its first
// '=', anything else whole (plan, slurm-conf).
#pragma once

#include <string>

namespace basilctl {

struct OptionWord {
  std::string opt;
  std::string value;          // after '=' when inline_value
  bool inline_value = false;
};

inline OptionWord split_option(const std::string& word) {
  const auto eq = word.find('=');
  if (word.rfind("--", 0) != 0 || eq == std::string::npos) return {word, "", false};
  return {word.substr(0, eq), word.substr(eq + 1), true};
}

}  // namespace basilctl
