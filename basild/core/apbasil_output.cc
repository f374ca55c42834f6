#include "basild/core/apbasil_output.h"

#include <string>

namespace basild {

bool looks_like_xml(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  const auto last = s.find_last_not_of(" \t\r\n");
  return first != std::string_view::npos && s[first] == '<' && s[last] == '>';
}

basil::Status judge_apbasil_output(std::string_view who, std::string_view out, std::optional<int> exit_code,
                                   std::string_view exit_text) {
  using basil::Code;
  using basil::Status;
  const bool xml = looks_like_xml(out);
  if (exit_code && *exit_code != 0 && !xml) {
    return Status(Code::kTransport, std::string(who) + " " + std::string(exit_text) + " and no usable XML (" +
                                        std::to_string(out.size()) + " bytes on stdout)");
  }
  if (out.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return Status(Code::kTransport, std::string(who) + " wrote nothing on stdout");
  if (!xml) {
    return Status(Code::kTransport,
                  std::string(who) + " answer truncated or not XML (" + std::to_string(out.size()) + " bytes)");
  }
  return Status::ok();
}

}  // namespace basild
