#include "basild/ctl/format.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <string_view>

namespace basilctl {

using nlohmann::json;

namespace {

bool looks_numeric(const std::string& s) {
  if (s.empty()) return false;
  std::size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  bool digit = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      digit = true;
    } else if (c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+' && c != '%') {
      return false;
    }
  }
  return digit;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

bool is_scalar_or_scalar_array(const json& v) {
  if (!v.is_array()) return !v.is_object();
  return std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_primitive(); });
}

bool is_array_of_objects(const json& v) {
  return v.is_array() && !v.empty() &&
         std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_object(); });
}

// {"a":1,"t":{"p50":2}} -> [("a",1), ("t.p50",2)]
void flatten(const json& obj, const std::string& prefix,
             std::vector<std::pair<std::string, const json*>>& out) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object() && !it->empty()) {
      flatten(*it, key, out);
    } else {
      out.emplace_back(std::move(key), &*it);
    }
  }
}

std::string table_of_objects(const json& rows, const std::vector<std::string>& preferred) {
  std::vector<std::string> columns;
  std::vector<std::map<std::string, std::string>> cells;
  for (const auto& row : rows) {
    std::vector<std::pair<std::string, const json*>> flat;
    flatten(row, "", flat);
    std::map<std::string, std::string> r;
    for (auto& [k, v] : flat) {
      if (std::find(columns.begin(), columns.end(), k) == columns.end()) columns.push_back(k);
      r[k] = cell(*v);
    }
    cells.push_back(std::move(r));
  }
  std::vector<std::string> ordered;
  for (const auto& p : preferred) {
    if (std::find(columns.begin(), columns.end(), p) != columns.end()) ordered.push_back(p);
  }
  for (const auto& c : columns) {
    if (std::find(ordered.begin(), ordered.end(), c) == ordered.end()) ordered.push_back(c);
  }
  std::vector<std::string> headers;
  for (const auto& c : ordered) headers.push_back(upper(c));
  std::vector<std::vector<std::string>> body;
  for (const auto& r : cells) {
    std::vector<std::string> line;
    for (const auto& c : ordered) {
      auto it = r.find(c);
      line.push_back(it == r.end() ? "-" : it->second);
    }
    body.push_back(std::move(line));
  }
  return render_table(headers, body);
}

// A command's table: exactly `columns`, in order, whatever the rows hold
// ("-" where a row has none). A time column is found under its name or,
// with --epoch, its name with _ms (the header then says so).
std::string table_of_columns(const json& rows, const std::vector<std::string>& columns) {
  std::vector<std::string> keys = columns;
  for (auto& k : keys)
    for (const auto& row : rows)
      if (!row.contains(k) && row.contains(k + "_ms")) {
        k += "_ms";
        break;
      }
  std::vector<std::string> headers;
  for (const auto& k : keys) headers.push_back(upper(k));
  std::vector<std::vector<std::string>> body;
  for (const auto& row : rows) {
    std::vector<std::string> line;
    for (const auto& k : keys) line.push_back(row.contains(k) ? cell(row.at(k)) : "-");
    body.push_back(std::move(line));
  }
  return render_table(headers, body);
}

std::string key_values(const std::vector<std::pair<std::string, std::string>>& kv) {
  std::size_t width = 0;
  for (const auto& [k, v] : kv) width = std::max(width, k.size());
  std::string out;
  for (const auto& [k, v] : kv) {
    out += k;
    out += ':';
    out.append(width - k.size() + 1, ' ');
    out += v;
    out += '\n';
  }
  return out;
}

std::string render_object(const json& doc, const std::vector<std::string>& preferred,
                          const std::string& title_prefix, const ColumnSets& sets) {
  std::vector<std::pair<std::string, std::string>> scalars;
  std::string sections;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const json& v = *it;
    std::string title = title_prefix.empty() ? it.key() : title_prefix + "." + it.key();
    const auto fixed_table = sets.find(title);
    const std::string heading =
        upper(fixed_table != sets.end() && !fixed_table->second.title.empty() ? fixed_table->second.title : title);
    if (is_array_of_objects(v)) {
      sections += "\n" + heading + " (" + std::to_string(v.size()) + ")\n";
      sections += fixed_table != sets.end() ? table_of_columns(v, fixed_table->second.columns)
                                            : table_of_objects(v, preferred);
    } else if (v.is_array() && v.empty()) {
      sections += "\n" + heading + " (0)\n";
    } else if (v.is_object() && !v.empty()) {
      bool flat = std::all_of(v.begin(), v.end(), is_scalar_or_scalar_array);
      if (flat) {
        std::vector<std::pair<std::string, const json*>> f;
        flatten(v, it.key(), f);
        for (auto& [k, x] : f) scalars.emplace_back(k, cell(*x));
      } else {
        sections += "\n" + upper(title) + "\n";
        sections += render_object(v, preferred, title, sets);
      }
    } else {
      scalars.emplace_back(it.key(), cell(v));
    }
  }
  std::string out = key_values(scalars);
  if (out.empty() && !sections.empty() && sections.front() == '\n') sections.erase(0, 1);
  return out + sections;
}

}  // namespace

std::string render_table(const std::vector<std::string>& headers,
                         const std::vector<std::vector<std::string>>& rows) {
  std::size_t ncols = headers.size();
  for (const auto& r : rows) ncols = std::max(ncols, r.size());
  std::vector<std::size_t> width(ncols, 0);
  std::vector<bool> numeric(ncols, true);
  std::vector<bool> any(ncols, false);
  for (std::size_t c = 0; c < headers.size(); ++c) width[c] = headers[c].size();
  for (const auto& r : rows) {
    for (std::size_t c = 0; c < r.size(); ++c) {
      width[c] = std::max(width[c], r[c].size());
      if (r[c] != "-") {
        any[c] = true;
        if (!looks_numeric(r[c])) numeric[c] = false;
      }
    }
  }
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string out;
    for (std::size_t c = 0; c < ncols; ++c) {
      const std::string empty;
      const std::string& v = c < cells.size() ? cells[c] : empty;
      std::size_t pad = width[c] - v.size();
      bool right = !header && numeric[c] && any[c];
      if (header && numeric[c] && any[c]) right = true;
      if (c > 0) out += "  ";
      if (right) out.append(pad, ' ');
      out += v;
      if (!right && c + 1 < ncols) out.append(pad, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(headers, true);
  std::size_t total = 0;
  for (std::size_t c = 0; c < ncols; ++c) total += width[c] + (c > 0 ? 2 : 0);
  out += std::string(total, '-') + "\n";
  for (const auto& r : rows) out += line(r, false);
  return out;
}

std::string cell(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "-";
    case json::value_t::string: return value.get<std::string>();
    case json::value_t::boolean: return value.get<bool>() ? "yes" : "no";
    case json::value_t::number_integer: return std::to_string(value.get<std::int64_t>());
    case json::value_t::number_unsigned: return std::to_string(value.get<std::uint64_t>());
    case json::value_t::number_float: {
      std::string s = fixed(value.get<double>(), 3);
      // 1.500 -> 1.5, 2.000 -> 2
      while (s.find('.') != std::string::npos && (s.back() == '0' || s.back() == '.')) {
        bool dot = s.back() == '.';
        s.pop_back();
        if (dot) break;
      }
      return s;
    }
    case json::value_t::array: {
      if (!is_scalar_or_scalar_array(value)) break;
      std::string out;
      for (const auto& e : value) {
        if (!out.empty()) out += ',';
        out += cell(e);
      }
      return out.empty() ? "-" : out;
    }
    default: break;
  }
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string render_generic(const json& doc, const std::vector<std::string>& preferred) {
  if (is_array_of_objects(doc)) return table_of_objects(doc, preferred);
  if (doc.is_array()) {
    if (doc.empty()) return "(none)\n";
    std::string out;
    for (const auto& e : doc) out += cell(e) + "\n";
    return out;
  }
  if (doc.is_object()) return render_object(doc, preferred, "", {});
  return cell(doc) + "\n";
}

std::string render_with_columns(const json& doc, const ColumnSets& sets) {
  if (!doc.is_object()) return render_generic(doc);
  return render_object(doc, {}, "", sets);
}

std::string render_stats(const json& doc) {
  if (!doc.is_object()) return render_generic(doc);
  std::string out;
  json rest = doc;
  const json* calls = doc.contains("calls") ? &doc.at("calls") : nullptr;
  if (calls != nullptr && calls->is_array()) {
    double scale = 1000.0;  // seconds -> ms
    if (doc.value("unit", std::string("seconds")) == "milliseconds") scale = 1.0;
    auto ms = [&](const json& call, const char* phase, const char* key) -> std::string {
      if (!call.contains(phase) || !call.at(phase).is_object()) return "-";
      const json& f = call.at(phase);
      if (!f.contains(key) || !f.at(key).is_number()) return "-";
      return fixed(f.at(key).get<double>() * scale, 3);
    };
    std::vector<std::vector<std::string>> rows;
    for (const auto& c : *calls) {
      if (!c.is_object()) continue;
      std::string type = c.contains("type") ? cell(c.at("type")) : "-";
      if (type.empty()) type = "-";
      rows.push_back({c.contains("caller") ? cell(c.at("caller")) : "-", c.contains("method") ? cell(c.at("method")) : "-", type,
                      c.contains("count") ? cell(c.at("count")) : "-",
                      c.contains("errors") ? cell(c.at("errors")) : "-",
                      ms(c, "transport", "min"), ms(c, "transport", "mean"),
                      ms(c, "transport", "p50"), ms(c, "transport", "p95"),
                      ms(c, "transport", "p99"), ms(c, "transport", "max"),
                      ms(c, "decode", "mean"), ms(c, "decode", "p99")});
    }
    out += "BASIL calls (times in milliseconds; transport = apbasil round trip; caller basild: its own polls\n"
           "and typed calls, forwarded: a scheduler's raw BASIL through /v1/basil)\n";
    if (rows.empty()) {
      out += "(no calls yet)\n";
    } else {
      out += render_table({"CALLER", "METHOD", "TYPE", "COUNT", "ERRORS", "MIN", "MEAN", "P50", "P95",
                           "P99", "MAX", "DECODE_MEAN", "DECODE_P99"},
                          rows);
    }
    rest.erase("calls");
    rest.erase("unit");
  }
  if (!rest.empty()) {
    if (!out.empty()) out += "\n";
    out += render_generic(rest);
  }
  return out;
}

std::string render_health(const json& doc) {
  if (!doc.is_object() || !doc.contains("status")) return render_generic(doc);
  json rest = doc;
  rest.erase("status");
  std::string out = "status: " + cell(doc.at("status")) + "\n";
  if (doc.contains("reasons") && doc["reasons"].is_array()) {
    for (const auto& r : doc["reasons"]) {
      out += "  ";
      out += r.is_object() ? cell(r.value("state", json("?"))) + ": " + cell(r.value("text", json(""))) : cell(r);
      out += "\n";
    }
    rest.erase("reasons");
  }
  if (!rest.empty()) out += render_generic(rest);
  return out;
}

int health_exit_code(const json& doc) {
  if (!doc.is_object() || !doc.contains("status") || !doc["status"].is_string()) return kHealthUnknown;
  const auto& s = doc["status"].get_ref<const std::string&>();
  if (s == "ok") return 0;
  if (s == "degraded") return 1;
  if (s == "down") return 2;
  return kHealthUnknown;
}

std::string render_human(std::string_view command, const json& doc) {
  if (command == "stats") return render_stats(doc);
  if (command == "health") return render_health(doc);
  // Each command's tables, column for column (basilctl(1)); --json has every field.
  using T = FixedTable;
  static const std::map<std::string_view, ColumnSets> kTables = {
      {"reservations",
       {{"reservations", T{{"reservation_id", "batch_id", "user", "state", "node_count", "nodes", "width", "depth",
                            "nppn", "pagg_id", "origin", "created"}}}}},
      {"jobs", {{"jobs", T{{"job_id", "state", "source", "last_seen"}}}}},
      {"inventory",
       {{"nodes", T{{"nid", "name", "state", "role", "architecture", "processors", "memory_mb", "accelerators",
                     "reservation_id"}}},
        {"reservations", T{{"reservation_id", "batch_id", "user", "nodes"}, "reservations in ALPS's inventory"}}}},
      {"orphans",
       {{"candidates", T{{"reservation_id", "kind", "batch_id", "user", "state", "seen", "first_seen", "nodes"}}},
        {"releasing", T{{"reservation_id", "batch_id", "user", "state", "nodes"}}}}},
  };
  if (const auto it = kTables.find(command); it != kTables.end()) return render_with_columns(doc, it->second);
  return render_generic(doc);
}

}  // namespace basilctl
