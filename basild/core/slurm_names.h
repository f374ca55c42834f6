// Slurm's names for Cray nodes. A site names its Slurm nodes after their
// NIDs by one rule (the default "nid%05d": NID 8 is nid00008), and Slurm
// writes sets of nodes as host lists ("nid[00008-00011,00014]"). Both ways
// of each are here, shared by basild (node state to Slurm), basilctl
// (slurm-conf) and the Slurm hooks (slurm/). Pure: no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basil_proto/status.h"

namespace basild {

// 0-9 only, whatever the locale (Slurm's names and numbers are ASCII).
inline bool ascii_digit(char c) { return c >= '0' && c <= '9'; }

// "PREFIX%dSUFFIX" or "PREFIX%0WdSUFFIX" (W from 1 to 10): one decimal
// conversion, "%%" for a literal percent; the prefix and suffix are the
// characters Slurm allows in a node name (letters, digits, '-', '_', '.').
class NodeNameRule {
 public:
  // The default rule, nid%05d.
  NodeNameRule();
  static basil::Result<NodeNameRule> parse(std::string_view format);

  std::string name(std::uint32_t nid) const;
  // The NID a name stands for under this rule; nullopt when the name is not
  // one this rule makes (wrong prefix or suffix, fewer digits than the
  // width, a leading zero beyond it, or a value over 2^32-1).
  std::optional<std::uint32_t> nid(std::string_view name) const;
  const std::string& format() const { return format_; }

 private:
  std::string format_ = "nid%05d";
  std::string prefix_ = "nid";
  std::string suffix_;
  unsigned width_ = 5;
};

// Expands a Slurm host list: comma-separated items, each a name with any
// number of bracketed range sets ("c0-0c0s[2-3]n[0-3]" is 8 names, the
// brackets multiplying out left to right). A range keeps the width of its
// first bound ("[008-011]" gives 008, 009, 010, 011). Errors name the item:
// unbalanced or nested brackets, empty items, reversed ranges, non-digits,
// and lists over `limit` names (a hostile "[0-4294967295]" is refused before
// anything is built).
basil::Result<std::vector<std::string>> expand_hostlist(std::string_view list, std::size_t limit = 1'000'000);

// The shortest host list of this form for the names, in the order given
// after grouping: names that end in digits share a bracket with the others
// of the same prefix and digit count ("nid00008", "nid00009", "nid00011" ->
// "nid[00008-00009,00011]"); other names stand alone. Duplicates collapse.
std::string compress_hostlist(const std::vector<std::string>& names);

}  // namespace basild
