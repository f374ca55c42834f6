#include "basild/ctl/format_events.h"

#include <ctime>
#include <vector>

#include "basild/ctl/format.h"

namespace basilctl {

using nlohmann::json;

std::string local_time_text(std::int64_t epoch_ms) {
  const std::time_t t = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm tm{};
  if (::localtime_r(&t, &tm) == nullptr) return std::to_string(epoch_ms);
  char text[40];
  if (std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S%z", &tm) == 0) return std::to_string(epoch_ms);
  std::string out(text);
  if (out.size() >= 5) out.insert(out.size() - 2, ":");  // +0100 -> +01:00, as ISO 8601 writes it
  return out;
}

json with_local_times(const json& doc, const TimeText& time_text) {
  constexpr std::int64_t kEpochPast2001 = 1'000'000'000'000;
  if (doc.is_array()) {
    json out = json::array();
    for (const auto& e : doc) out.push_back(with_local_times(e, time_text));
    return out;
  }
  if (!doc.is_object()) return doc;
  json out = json::object();
  for (const auto& [key, value] : doc.items()) {
    const bool time = key.size() > 3 && key.ends_with("_ms") && value.is_number_integer() &&
                      value.get<std::int64_t>() >= kEpochPast2001;
    if (time) {
      out[key.substr(0, key.size() - 3)] = time_text(value.get<std::int64_t>());
    } else {
      out[key] = with_local_times(value, time_text);
    }
  }
  return out;
}

std::string detail_text(const json& detail) {
  if (!detail.is_object()) return detail.is_null() ? "" : cell(detail);
  std::string out;
  for (const auto& [key, value] : detail.items()) {
    if (key == "by") continue;
    if (!out.empty()) out += ' ';
    out += key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

namespace {

std::string text_of(const json& row, const char* key) {
  const auto it = row.find(key);
  if (it == row.end() || it->is_null()) return "-";
  const std::string s = cell(*it);
  return s.empty() ? "-" : s;
}

std::string time_of(const json& row, const TimeText& time_text) {
  const auto it = row.find("time_ms");
  return it != row.end() && it->is_number_integer() ? time_text(it->get<std::int64_t>()) : "-";
}

// The table, its last column cut so that every line fits in `width`.
std::string fitted(const std::vector<std::string>& headers, std::vector<std::vector<std::string>> rows,
                   std::size_t width) {
  if (width > 0 && !rows.empty()) {
    std::size_t fixed = 0;
    for (std::size_t c = 0; c + 1 < headers.size(); ++c) {
      std::size_t w = headers[c].size();
      for (const auto& r : rows) w = std::max(w, r[c].size());
      fixed += w + 2;
    }
    const std::size_t room = width > fixed + headers.back().size() ? width - fixed : headers.back().size();
    for (auto& r : rows)
      if (r.back().size() > room) r.back() = r.back().substr(0, room > 3 ? room - 3 : 0) + "...";
  }
  std::string table = render_table(headers, rows);
  if (width == 0) return table;
  // The rule under the header: no longer than the lines.
  const auto first = table.find('\n');
  const auto second = table.find('\n', first + 1);
  if (first != std::string::npos && second != std::string::npos && second - first - 1 > width)
    table.replace(first + 1, second - first - 1, std::string(width, '-'));
  return table;
}

}  // namespace

std::string render_events(const json& doc, std::size_t width, const TimeText& time_text) {
  if (!doc.is_object()) return render_generic(doc);
  std::string out;
  const json events = doc.value("events", json::array());
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : events) {
    if (!e.is_object()) continue;
    rows.push_back({time_of(e, time_text), text_of(e, "kind"), text_of(e, "reservation_id"), text_of(e, "batch_id"),
                    text_of(e, "user"), text_of(e, "by"), detail_text(e.value("detail", json()))});
  }
  out += "EVENTS (" + std::to_string(rows.size()) + ")\n";
  out += rows.empty() ? "(none)\n" : fitted({"TIME", "KIND", "RESID", "JOB", "USER", "BY", "DETAIL"}, rows, width);
  const json nodes = doc.value("node_events", json::array());
  rows.clear();
  for (const auto& n : nodes) {
    if (!n.is_object()) continue;
    rows.push_back({time_of(n, time_text), text_of(n, "nid"), text_of(n, "kind"), text_of(n, "from"),
                    text_of(n, "to")});
  }
  out += "\nNODE EVENTS (" + std::to_string(rows.size()) + ")\n";
  out += rows.empty() ? "(none)\n" : fitted({"TIME", "NID", "KIND", "FROM", "TO"}, rows, width);
  return out;
}

}  // namespace basilctl
