// One word of a subcommand's command line: "--opt=VALUE" split at its first
// '=', anything else whole (plan, slurm-conf).
#pragma once

#include <cctype>
#include <string>

namespace basilctl {

struct OptionWord {
  std::string opt;
  std::string value;          // after '=' when inline_value
  bool inline_value = false;
};

// "--name=value" and, as Slurm's commands take them, "-N1" (a one-letter
// option with its value attached) come apart; other words stay whole.
inline OptionWord split_option(const std::string& word) {
  if (word.size() > 2 && word[0] == '-' && std::isalpha(static_cast<unsigned char>(word[1])) != 0)
    return {word.substr(0, 2), word.substr(2), true};
  const auto eq = word.find('=');
  if (word.rfind("--", 0) != 0 || eq == std::string::npos) return {word, "", false};
  return {word.substr(0, eq), word.substr(eq + 1), true};
}

}  // namespace basilctl
