#include "basild/core/xml_log_format.h"

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <variant>

#include "basil_proto/codec.h"

namespace basild {

namespace {

std::string describe_body(const basil::Response& r) {
  return std::visit(
      [&](const auto& b) -> std::string {
        using B = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<B, std::monostate>) {
          return "no body";
        } else if constexpr (std::is_same_v<B, basil::EngineInfo>) {
          std::string s = "engine " + b.name + " " + b.version;
          if (!b.basil_support.empty()) {
            s += " supports";
            for (const auto& v : b.basil_support) s += " " + v;
          }
          return s;
        } else if constexpr (std::is_same_v<B, basil::Inventory>) {
          return "inventory: " + std::to_string(b.nodes.size()) + " nodes, " +
                 std::to_string(b.reservations.size()) + " reservations";
        } else if constexpr (std::is_same_v<B, basil::Summary>) {
          return "summary: changecount " + std::to_string(b.changecount);
        } else if constexpr (std::is_same_v<B, basil::StatusInfo>) {
          return "status of " + std::to_string(b.reservations.size() + b.applications.size()) +
                 " items";
        } else if constexpr (std::is_same_v<B, basil::Reserved>) {
          std::string s = "reservation " + std::to_string(b.reservation_id);
          if (b.has_reserved_nodes) s += " on " + std::to_string(b.reserved_nodes.size()) + " nodes";
          return s;
        } else if constexpr (std::is_same_v<B, basil::Confirmed>) {
          return b.reservation_id ? "confirmed " + std::to_string(*b.reservation_id) : "confirmed";
        } else if constexpr (std::is_same_v<B, basil::Released>) {
          std::string s = b.reservation_id ? "released " + std::to_string(*b.reservation_id) : "released";
          if (b.claims) s += ", claims " + std::to_string(*b.claims);
          return s;
        } else {
          return "switched " + std::to_string(b.reservations.size() + b.applications.size()) + " items";
        }
      },
      r.body);
}

std::string describe_response(std::string_view xml) {
  auto decoded = basil::decode_response(xml);
  if (!decoded) return "undecodable: " + decoded.status().to_string();
  if (!decoded->ok()) return decoded->error().message();
  return describe_body(*decoded);
}

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  return buf;
}

}  // namespace

std::string format_xml_log_record(const XmlLogRecord& r) {
  const bool response = r.direction == XmlLogRecord::Direction::kResponse;
  nlohmann::json h = {{"time", r.time},
                      {"call", r.call_id},
                      {"dir", response ? "response" : "request"},
                      {"kind", r.kind},
                      {"caller", r.caller},
                      {"transport", r.transport}};
  if (response) {
    if (r.duration_ms) h["duration_ms"] = *r.duration_ms;
    h["status"] = r.status;
    if (!r.diagnostics.empty()) h["diagnostics"] = r.diagnostics;
  }
  h["bytes"] = r.body.size();
  // Invalid UTF-8 (garbage on stderr) is replaced, never thrown about.
  std::string out(kXmlLogPrefix);
  out += h.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out += '\n';
  out += r.body;
  out += '\n';
  return out;
}

XmlLogParse parse_xml_log(std::string_view text) {
  XmlLogParse out;
  std::size_t pos = 0;
  auto problem = [&](std::size_t at, const std::string& what) {
    out.problems.push_back("offset " + std::to_string(at) + ": " + what);
  };
  // Moves pos to the next line that starts with the prefix.
  auto resync = [&](std::size_t from) {
    std::size_t p = from;
    while (p < text.size()) {
      if (text.substr(p, kXmlLogPrefix.size()) == kXmlLogPrefix && (p == 0 || text[p - 1] == '\n')) {
        return p;
      }
      const auto nl = text.find('\n', p);
      if (nl == std::string_view::npos) return text.size();
      p = nl + 1;
    }
    return text.size();
  };
  while (pos < text.size()) {
    if (text.substr(pos, kXmlLogPrefix.size()) != kXmlLogPrefix) {
      const auto next = resync(pos);
      problem(pos, "skipped " + std::to_string(next - pos) + " bytes that are not a record");
      pos = next;
      continue;
    }
    const auto eol = text.find('\n', pos);
    if (eol == std::string_view::npos) {
      problem(pos, "header line cut short");
      break;
    }
    const auto header = text.substr(pos + kXmlLogPrefix.size(), eol - pos - kXmlLogPrefix.size());
    auto h = nlohmann::json::parse(header, nullptr, /*allow_exceptions=*/false);
    XmlLogRecord r;
    std::size_t bytes = 0;
    bool good = h.is_object() && h.contains("bytes") && h["bytes"].is_number_unsigned() &&
                h.contains("call") && h["call"].is_number_unsigned() && h.contains("dir") &&
                h["dir"].is_string();
    if (good) {
      bytes = h["bytes"].get<std::size_t>();
      r.call_id = h["call"].get<std::uint64_t>();
      const auto dir = h["dir"].get<std::string>();
      good = dir == "request" || dir == "response";
      r.direction = dir == "response" ? XmlLogRecord::Direction::kResponse
                                      : XmlLogRecord::Direction::kRequest;
      auto str = [&](const char* key) {
        auto it = h.find(key);
        return it != h.end() && it->is_string() ? it->get<std::string>() : std::string();
      };
      r.time = str("time");
      r.kind = str("kind");
      if (const auto caller = str("caller"); !caller.empty()) r.caller = caller;
      r.transport = str("transport");
      r.status = str("status");
      r.diagnostics = str("diagnostics");
      if (auto it = h.find("duration_ms"); it != h.end() && it->is_number()) {
        r.duration_ms = it->get<double>();
      }
    }
    if (!good) {
      problem(pos, "bad record header");
      pos = resync(eol + 1);
      continue;
    }
    const std::size_t body_at = eol + 1;
    if (bytes > text.size() - body_at || text.size() - body_at - bytes < 1) {
      problem(pos, "record of call " + std::to_string(r.call_id) + " cut short");
      break;
    }
    if (text[body_at + bytes] != '\n') {
      problem(pos, "record of call " + std::to_string(r.call_id) + " has a wrong length");
      pos = resync(body_at);
      continue;
    }
    r.body.assign(text.substr(body_at, bytes));
    out.records.push_back(std::move(r));
    pos = body_at + bytes + 1;
  }
  return out;
}

std::string replay_text(const std::vector<XmlLogRecord>& records, const ReplayOptions& options) {
  // Pair by call id; an exchange is printed at its request's place (or at
  // its response when the request is missing from the log).
  std::map<std::uint64_t, const XmlLogRecord*> responses;
  std::map<std::uint64_t, const XmlLogRecord*> requests;
  for (const auto& r : records) {
    auto& m = r.direction == XmlLogRecord::Direction::kResponse ? responses : requests;
    m.emplace(r.call_id, &r);
  }
  std::string out;
  for (const auto& r : records) {
    const XmlLogRecord* req = nullptr;
    const XmlLogRecord* resp = nullptr;
    if (r.direction == XmlLogRecord::Direction::kRequest) {
      if (requests[r.call_id] != &r) continue;  // a repeated id: first one only
      req = &r;
      auto it = responses.find(r.call_id);
      if (it != responses.end()) resp = it->second;
    } else {
      if (requests.count(r.call_id) != 0 || responses[r.call_id] != &r) continue;
      resp = &r;
    }
    const XmlLogRecord& first = req != nullptr ? *req : *resp;
    out += first.time + " call " + std::to_string(first.call_id) + " " + first.kind +
           (first.caller == "basild" ? std::string() : " " + first.caller) + " " + first.transport + " ";
    if (resp == nullptr) {
      out += "(no response logged)\n";
    } else {
      out += resp->duration_ms ? ms_text(*resp->duration_ms) : std::string("? ms");
      out += " " + resp->status;
      if (resp->status == "ok" || resp->body.find("<BasilResponse") != std::string::npos) {
        out += ": " + describe_response(resp->body);
      }
      if (!resp->diagnostics.empty()) out += " [" + resp->diagnostics + "]";
      out += "\n";
    }
    if (options.show_xml) {
      if (req != nullptr) out += "  >>> request\n" + req->body + "\n";
      if (resp != nullptr) out += "  <<< response\n" + resp->body + "\n";
    }
  }
  return out;
}

}  // namespace basild
