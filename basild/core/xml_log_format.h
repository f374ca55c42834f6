// The XML log's record format, its parser (for `basilctl replay`) and the
// replay formatter. Pure: strings in, strings out.
//
// A record is a header line and a body of a stated length:
//
//   #basil-xml-log v1 {"time":"2024-05-01T12:00:00.123456Z","call":7,"dir":"request",
//                      "kind":"RESERVE","transport":"local","bytes":312}\n
//   <312 bytes of XML, exactly as sent or received>\n
//
// The header is one line of JSON after the fixed prefix; `bytes` says how
// many body bytes follow, so XML holding anything (newlines, a line that looks
// like a header, binary garbage) is read back unambiguously. A response
// record adds "duration_ms" (transport time), "status" (a code name such as
// "ok", "timeout") and, when there is any, "diagnostics" (stderr, exit status).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace basild {

inline constexpr std::string_view kXmlLogPrefix = "#basil-xml-log v1 ";

struct XmlLogRecord {
  enum class Direction : std::uint8_t { kRequest, kResponse };
  std::string time;       // ISO 8601 UTC with microseconds
  std::uint64_t call_id = 0;
  Direction direction = Direction::kRequest;
  std::string kind;       // call_kind_name(): "RESERVE", "INVENTORY", "RAW", ...
  std::string caller = "basild";  // caller_name(): "basild", or "forwarded" (a scheduler's call)
  std::string transport;  // Transport::name(), or "memory" (an ENGINE answered from basild's engine memory)
  std::optional<double> duration_ms;  // responses
  std::string status;                 // responses: "ok" or a code name
  std::string diagnostics;            // responses, may be empty
  std::string body;                   // the XML (or whatever came back)
};

// One record in the format above.
std::string format_xml_log_record(const XmlLogRecord& record);

struct XmlLogParse {
  std::vector<XmlLogRecord> records;
  // Problems met, each "offset N: what"; parsing resynchronises on the next
  // header line, and a record cut short at the end (a crash mid-write) is
  // reported here and left out.
  std::vector<std::string> problems;
};

XmlLogParse parse_xml_log(std::string_view text);

struct ReplayOptions {
  bool show_xml = false;  // print the bodies under each exchange
};

// Each exchange (request and response paired by call id, in log order) with
// its timing and a one-line summary of the decoded answer, e.g.
//   2024-05-01T12:00:00.123456Z call 7 RESERVE local 12.345 ms ok: reservation 5 on 2 nodes
std::string replay_text(const std::vector<XmlLogRecord>& records, const ReplayOptions& options = {});

}  // namespace basild
