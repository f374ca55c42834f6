#include "basild/core/job_table.h"

#include <algorithm>

#include "basild/core/slurm_names.h"

namespace basild {

namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

bool id_char(char ch) {
  const auto c = static_cast<unsigned char>(ch);
  return c > 0x20 && c < 0x7f;
}

bool state_char(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || ascii_digit(c) || c == '_'; }

// The next blank-separated field of `line`, taken off its front.
std::string_view next_field(std::string_view& line) {
  std::size_t start = 0;
  while (start < line.size() && blank(line[start])) ++start;
  std::size_t end = start;
  while (end < line.size() && !blank(line[end])) ++end;
  const std::string_view field = line.substr(start, end - start);
  line.remove_prefix(end);
  return field;
}

}  // namespace

basil::Result<std::vector<ListedJob>> parse_job_listing(std::string_view text) {
  std::vector<ListedJob> jobs;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    auto bad = [&](const std::string& why) {
      return basil::Status(basil::Code::kInvalidValue, "job listing line " + std::to_string(line_no) + ": " + why);
    };
    const std::string_view id = next_field(line);
    if (id.empty()) continue;
    const std::string_view state = next_field(line);
    if (!next_field(line).empty()) return bad("more than a job id and a state");
    if (id.size() > kMaxJobIdLength)
      return bad("job id longer than " + std::to_string(kMaxJobIdLength) + " characters");
    if (!std::all_of(id.begin(), id.end(), id_char) || std::none_of(id.begin(), id.end(), ascii_digit))
      return bad("not a job id (\"ID\" or \"ID STATE\" per line, the id printable ASCII without blanks, with a digit)");
    if (state.size() > kMaxJobStateLength)
      return bad("job state longer than " + std::to_string(kMaxJobStateLength) + " characters");
    if (!std::all_of(state.begin(), state.end(), state_char)) return bad("not a job state (letters, digits and '_')");
    jobs.push_back({std::string(id), std::string(state)});
  }
  return jobs;
}

bool job_state_ended(std::string_view state) {
  static constexpr std::string_view kEnded[] = {
      "COMPLETING", "COMPLETED", "CANCELLED",     "FAILED",    "TIMEOUT",  "NODE_FAIL",    "PREEMPTED",
      "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED"};
  for (const auto e : kEnded)
    if (state == e) return true;
  return false;
}

std::vector<std::string> job_ids(const std::vector<ListedJob>& jobs) {
  std::vector<std::string> ids;
  ids.reserve(jobs.size());
  for (const auto& j : jobs) ids.push_back(j.id);
  return ids;
}

}  // namespace basild
