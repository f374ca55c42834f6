#include "basild/core/job_table.h"

namespace basild {

basil::Result<std::vector<std::string>> parse_job_listing(std::string_view text) {
  std::vector<std::string> ids;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    auto bad = [&](const std::string& why) {
      return basil::Status(basil::Code::kInvalidValue,
                           "job listing line " + std::to_string(line_no) + ": " + why);
    };
    if (line.size() > kMaxJobIdLength)
      return bad("longer than " + std::to_string(kMaxJobIdLength) + " characters");
    for (char ch : line) {
      const auto c = static_cast<unsigned char>(ch);
      if (c <= 0x20 || c >= 0x7f)
        return bad("not a job id (one id per line, printable ASCII without blanks)");
    }
    ids.emplace_back(line);
  }
  return ids;
}

}  // namespace basild
