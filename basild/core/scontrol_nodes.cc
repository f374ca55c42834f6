#include "basild/core/scontrol_nodes.h"

#include <algorithm>
#include <cctype>

#include "basild/core/slurm_names.h"

namespace basild {

namespace {

constexpr std::string_view kNodeName = "NodeName=";

// Whether `s` at `at` is Slurm's reason stamp, " [user@YYYY-MM-DDTHH:MM:SS]".
bool stamp_at(std::string_view s, std::size_t at) {
  if (s.substr(at, 2) != " [") return false;
  std::size_t i = at + 2;
  const std::size_t user = i;
  while (i < s.size() && s[i] != '@' && s[i] != ']' && s[i] != ' ') ++i;
  if (i == user || i >= s.size() || s[i] != '@') return false;
  constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd]";
  const std::string_view t = s.substr(i + 1, kShape.size());
  if (t.size() != kShape.size()) return false;
  for (std::size_t k = 0; k < kShape.size(); ++k)
    if (kShape[k] == 'd' ? !ascii_digit(t[k]) : t[k] != kShape[k]) return false;
  return true;
}

// The Reason of one line (see the header), without its stamp.
std::string reason_of(std::string_view line) {
  const std::size_t at = line.find(" Reason=");
  if (at == std::string_view::npos) return {};
  for (std::string_view later : {" Comment=", " Extra="})
    if (line.find(later) < at) return {};  // the words are inside a comment
  std::string_view r = line.substr(at + 8);
  for (std::size_t i = r.find(" ["); i != std::string_view::npos; i = r.find(" [", i + 1)) {
    if (stamp_at(r, i)) {
      r = r.substr(0, i);
      break;
    }
  }
  while (!r.empty() && (r.back() == ' ' || r.back() == '\r')) r.remove_suffix(1);
  return std::string(r);
}

// The value of the first " KEY=" of the line, up to the next blank.
std::string word_of(std::string_view line, std::string_view key) {
  const std::size_t at = line.find(key);
  if (at == std::string_view::npos) return {};
  const std::string_view rest = line.substr(at + key.size());
  return std::string(rest.substr(0, rest.find(' ')));
}

}  // namespace

void read_state_flags(std::string_view state, SlurmNode& node) {
  node.drain = node.down = node.fail = false;
  std::size_t start = 0;
  while (start <= state.size()) {
    const std::size_t plus = std::min(state.find('+', start), state.size());
    std::string word;
    for (char c : state.substr(start, plus - start)) {
      if (std::isalpha(static_cast<unsigned char>(c)) == 0 && c != '_') break;  // a mark: the word ends
      word += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    if (word == "DRAIN" || word == "DRAINED" || word == "DRAINING") node.drain = true;
    if (word == "DOWN") node.down = true;
    if (word == "FAIL" || word == "FAILING") node.fail = true;
    start = plus + 1;
  }
}

std::vector<SlurmNode> parse_scontrol_nodes(std::string_view text) {
  std::vector<SlurmNode> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.substr(0, kNodeName.size()) != kNodeName) continue;
    SlurmNode n;
    const std::string_view rest = line.substr(kNodeName.size());
    n.name = std::string(rest.substr(0, rest.find(' ')));
    if (n.name.empty()) continue;
    // The words before the free texts: none of those holds " State=".
    const std::size_t free = std::min({line.find(" Reason="), line.find(" Comment="), line.find(" Extra=")});
    n.state = word_of(line.substr(0, free), " State=");
    read_state_flags(n.state, n);
    n.reason = reason_of(line);
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace basild
