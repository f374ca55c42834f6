// Small text checks the Slurm hooks share. Pure.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

#include "basil_proto/status.h"

namespace basild::slurm {

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
// A control character: a byte below 0x20, or 0x7f.
inline bool is_control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }
inline bool all_digits(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_digit); }
inline bool control_free(std::string_view s) { return std::none_of(s.begin(), s.end(), is_control); }

// The error of a value that does not read.
inline basil::Status invalid(std::string message) {
  return basil::Status(basil::Code::kInvalidValue, std::move(message));
}

}  // namespace basild::slurm
