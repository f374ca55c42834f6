#include "emulator/core/system.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

namespace emu {

using basil::Code;
using basil::Result;
using basil::Status;
using nlohmann::json;

bool Geometry::valid(std::uint32_t nid) const {
  const std::uint32_t in_cab = nid % cab_stride();
  return in_cab < chassis_per_cabinet * chassis_stride();
}

Position Geometry::position(std::uint32_t nid) const {
  const std::uint32_t cab = nid / cab_stride();
  const std::uint32_t in_cab = nid % cab_stride();
  const std::uint32_t in_chassis = in_cab % chassis_stride();
  return Position{cab / rows, cab % rows, in_cab / chassis_stride(), in_chassis / nodes_per_slot,
                  in_chassis % nodes_per_slot};
}

std::string Geometry::cname(std::uint32_t nid) const {
  const Position p = position(nid);
  std::string out = "c";
  out += std::to_string(p.column);
  out += '-';
  out += std::to_string(p.row);
  out += 'c';
  out += std::to_string(p.chassis);
  out += 's';
  out += std::to_string(p.slot);
  out += 'n';
  out += std::to_string(p.node);
  return out;
}

std::vector<basil::NidList::Range> Geometry::positions(std::uint32_t first,
                                                       std::uint32_t count) const {
  std::vector<basil::NidList::Range> out;
  std::uint32_t nid = first;
  const std::uint32_t used = chassis_per_cabinet * chassis_stride();
  while (count > 0) {
    const std::uint32_t in_cab = nid % cab_stride();
    if (in_cab >= used) {  // skip to the next cabinet
      nid += cab_stride() - in_cab;
      continue;
    }
    const std::uint32_t run = std::min(count, used - in_cab);
    out.emplace_back(nid, nid + run - 1);
    nid += run;
    count -= run;
  }
  return out;
}

std::vector<NodeRange> merge_ranges(std::vector<NodeRange> ranges) {
  std::vector<NodeRange> out;
  out.reserve(ranges.size());
  for (const NodeRange& r : ranges) {
    if (!out.empty() && out.back().same_kind(r) && std::uint64_t{out.back().last} + 1 == r.first) {
      out.back().last = r.last;
    } else {
      out.push_back(r);
    }
  }
  return out;
}

namespace {

Layout xc30_layout() {
  Layout l;
  l.name = "xc30";
  l.sockets = 2;
  l.segments_per_socket = 1;
  l.cus_per_segment = 8;
  l.threads_per_cu = 2;
  l.clock_mhz = 2600;
  l.memory_mb = 65536;
  return l;
}

void add_nodes(System& s, std::uint32_t first, std::uint32_t count, std::uint32_t layout) {
  for (auto [a, b] : s.geometry.positions(first, count)) {
    NodeRange r;
    r.first = a;
    r.last = b;
    r.layout = layout;
    s.nodes.push_back(r);
  }
}

Geometry xc_geometry() { return Geometry{2, 3, 16, 4, 0}; }
Geometry xt_geometry() { return Geometry{2, 3, 8, 4, 128}; }

}  // namespace

std::vector<std::string> preset_names() {
  return {"tds-8", "xc30-2256", "xt5-1844", "xk7-gpu", "big-100k"};
}

Result<System> preset(std::string_view name) {
  System s;
  if (name == "tds-8") {
    s.mpp_host = "tds";
    s.cle = "5.2";
    s.geometry = xc_geometry();
    s.geometry.rows = 1;
    s.layouts.push_back(xc30_layout());
    add_nodes(s, 8, 8, 0);  // c0-0c0s2n0 .. c0-0c0s3n3
  } else if (name == "xc30-2256") {
    s.mpp_host = "xc30";
    s.cle = "5.2";
    s.geometry = xc_geometry();
    s.layouts.push_back(xc30_layout());
    add_nodes(s, 24, 2256, 0);  // NIDs 0-23 are service nodes
  } else if (name == "big-100k") {
    s.mpp_host = "big";
    s.cle = "5.2";
    s.geometry = xc_geometry();
    s.geometry.rows = 4;
    s.layouts.push_back(xc30_layout());
    add_nodes(s, 24, 100000, 0);
  } else if (name == "xt5-1844") {
    s.mpp_host = "xt5";
    s.cle = "2.2";
    s.geometry = xt_geometry();
    Layout l;
    l.name = "xt5";
    l.sockets = 2;
    l.cus_per_segment = 6;
    l.threads_per_cu = 1;
    l.clock_mhz = 2400;
    l.memory_mb = 16000;
    s.layouts.push_back(l);
    add_nodes(s, 16, 1844, 0);  // NIDs 0-15 are service nodes
  } else if (name == "xk7-gpu") {
    s.mpp_host = "xk7";
    s.cle = "4.1";
    s.gemini = true;
    s.geometry = xt_geometry();
    Layout l;
    l.name = "xk7";
    l.sockets = 1;
    l.segments_per_socket = 2;
    l.cus_per_segment = 4;
    l.threads_per_cu = 2;
    l.clock_mhz = 2200;
    l.memory_mb = 32768;
    l.accel = AccelSpec{"GPU", "Tesla_K20X", 6144, 732};
    s.layouts.push_back(l);
    add_nodes(s, 16, 176, 0);
  } else {
    std::string names;
    for (const auto& n : preset_names()) names += (names.empty() ? "" : ", ") + n;
    return Status(Code::kInvalidValue, "unknown preset '" + std::string(name) + "' (known: " + names + ")");
  }
  s.nodes = merge_ranges(std::move(s.nodes));
  return s;
}

// ---------------------------------------------------------------- JSON

namespace {

struct JsonError {
  std::string message;
};

void check_keys(const json& j, std::string_view where, std::initializer_list<std::string_view> keys) {
  if (!j.is_object()) throw JsonError{std::string(where) + ": expected an object"};
  for (const auto& [k, v] : j.items()) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end())
      throw JsonError{std::string(where) + ": unknown key '" + k + "'"};
  }
}

template <typename T>
T get_uint(const json& j, const char* key, T def, T lo, T hi, std::string_view where) {
  if (!j.contains(key)) return def;
  const json& v = j.at(key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    throw JsonError{std::string(where) + "." + key + ": expected a non-negative integer"};
  const auto n = v.get<std::uint64_t>();
  if (n < static_cast<std::uint64_t>(lo) || n > static_cast<std::uint64_t>(hi))
    throw JsonError{std::string(where) + "." + key + ": " + std::to_string(n) + " out of range [" +
                    std::to_string(lo) + ", " + std::to_string(hi) + "]"};
  return static_cast<T>(n);
}

double get_double(const json& j, const char* key, double def, double lo, double hi,
                  std::string_view where) {
  if (!j.contains(key)) return def;
  const json& v = j.at(key);
  if (!v.is_number()) throw JsonError{std::string(where) + "." + key + ": expected a number"};
  const double d = v.get<double>();
  if (!(d >= lo && d <= hi))
    throw JsonError{std::string(where) + "." + key + ": out of range"};
  return d;
}

std::string get_string(const json& j, const char* key, std::string def, std::string_view where) {
  if (!j.contains(key)) return def;
  if (!j.at(key).is_string()) throw JsonError{std::string(where) + "." + key + ": expected a string"};
  return j.at(key).get<std::string>();
}

bool get_bool(const json& j, const char* key, bool def, std::string_view where) {
  if (!j.contains(key)) return def;
  if (!j.at(key).is_boolean()) throw JsonError{std::string(where) + "." + key + ": expected true or false"};
  return j.at(key).get<bool>();
}

template <typename E>
E get_enum(const json& j, const char* key, E def, std::string_view where) {
  if (!j.contains(key)) return def;
  const std::string s = get_string(j, key, "", where);
  auto e = basil::parse_known_enum<E>(s);
  if (!e) throw JsonError{std::string(where) + "." + key + ": unknown value '" + s + "'"};
  return *e;
}

MethodFaults method_faults_from(const json& j, std::string_view where) {
  check_keys(j, where,
             {"latency_ms", "latency_per_node_us", "transient_rate", "hang_rate", "truncate_rate",
              "garbage_rate", "exit_rate", "stderr_rate"});
  MethodFaults m;
  m.latency_ms = get_double(j, "latency_ms", 0, 0, 3.6e6, where);
  m.latency_per_node_us = get_double(j, "latency_per_node_us", 0, 0, 1e6, where);
  m.transient_rate = get_double(j, "transient_rate", 0, 0, 1, where);
  m.hang_rate = get_double(j, "hang_rate", 0, 0, 1, where);
  m.truncate_rate = get_double(j, "truncate_rate", 0, 0, 1, where);
  m.garbage_rate = get_double(j, "garbage_rate", 0, 0, 1, where);
  m.exit_rate = get_double(j, "exit_rate", 0, 0, 1, where);
  m.stderr_rate = get_double(j, "stderr_rate", 0, 0, 1, where);
  return m;
}

const std::set<std::string>& method_keys() {
  static const std::set<std::string> k = {"*",       "ENGINE",  "INVENTORY", "SUMMARY", "STATUS",
                                          "RESERVE", "CONFIRM", "RELEASE",   "SWITCH"};
  return k;
}

FaultConfig faults_from(const json& j) {
  check_keys(j, "faults", {"seed", "cscs_model", "cscs_scale", "exit_code", "confirm_too_soon_s", "methods"});
  FaultConfig f;
  f.seed = get_uint<std::uint64_t>(j, "seed", 0, 0, UINT64_MAX, "faults");
  f.cscs_model = get_bool(j, "cscs_model", false, "faults");
  f.cscs_scale = get_double(j, "cscs_scale", 1.0, 0, 1000, "faults");
  f.exit_code = get_uint<int>(j, "exit_code", 1, 1, 255, "faults");
  f.confirm_too_soon_s = get_uint<std::uint32_t>(j, "confirm_too_soon_s", 0, 0, 3600, "faults");
  if (j.contains("methods")) {
    const json& m = j.at("methods");
    if (!m.is_object()) throw JsonError{"faults.methods: expected an object"};
    for (const auto& [k, v] : m.items()) {
      if (!method_keys().count(k)) throw JsonError{"faults.methods: unknown method '" + k + "'"};
      f.methods[k] = method_faults_from(v, "faults.methods." + k);
    }
  }
  return f;
}

json faults_json(const FaultConfig& f) {
  json j;
  j["seed"] = f.seed;
  j["cscs_model"] = f.cscs_model;
  j["cscs_scale"] = f.cscs_scale;
  j["exit_code"] = f.exit_code;
  j["confirm_too_soon_s"] = f.confirm_too_soon_s;
  json m = json::object();
  for (const auto& [k, v] : f.methods) {
    m[k] = json{{"latency_ms", v.latency_ms},         {"latency_per_node_us", v.latency_per_node_us},
                {"transient_rate", v.transient_rate}, {"hang_rate", v.hang_rate},
                {"truncate_rate", v.truncate_rate},   {"garbage_rate", v.garbage_rate},
                {"exit_rate", v.exit_rate},           {"stderr_rate", v.stderr_rate}};
  }
  j["methods"] = m;
  return j;
}

System system_from(const json& j, bool require_nodes) {
  check_keys(j, "system",
             {"mpp_host", "cle", "interconnect", "inventory_forms", "fsync", "apsched", "switch", "geometry", "layouts",
              "nodes", "faults"});
  System s;
  s.mpp_host = get_string(j, "mpp_host", "UNKNOWN", "system");
  s.cle = get_string(j, "cle", "5.2", "system");
  if (!basil::cle_release(s.cle)) throw JsonError{"system.cle: unknown CLE release '" + s.cle + "'"};
  const std::string ic = get_string(j, "interconnect", "aries", "system");
  if (ic != "aries" && ic != "gemini" && ic != "seastar")
    throw JsonError{"system.interconnect: expected aries, gemini or seastar"};
  s.gemini = ic == "gemini";
  s.inventory_forms = get_bool(j, "inventory_forms", true, "system");
  s.fsync = get_bool(j, "fsync", false, "system");
  const std::string apsched = get_string(j, "apsched", "parallel", "system");
  if (apsched != "serial" && apsched != "parallel") throw JsonError{"system.apsched: expected serial or parallel"};
  s.apsched_serial = apsched == "serial";
  if (j.contains("switch")) {
    const json& w = j.at("switch");
    check_keys(w, "switch", {"enabled", "switch_ms", "max_coresident", "empty_early"});
    s.switching.enabled = get_bool(w, "enabled", true, "switch");
    s.switching.switch_ms = get_uint<std::uint32_t>(w, "switch_ms", 500, 0, 600000, "switch");
    s.switching.max_coresident = get_uint<std::uint32_t>(w, "max_coresident", 2, 1, 16, "switch");
    s.switching.empty_early = get_bool(w, "empty_early", false, "switch");
  }
  if (j.contains("geometry")) {
    const json& g = j.at("geometry");
    check_keys(g, "geometry", {"rows", "chassis_per_cabinet", "slots_per_chassis", "nodes_per_slot", "cabinet_stride"});
    s.geometry.rows = get_uint<std::uint32_t>(g, "rows", 2, 1, 64, "geometry");
    s.geometry.chassis_per_cabinet = get_uint<std::uint32_t>(g, "chassis_per_cabinet", 3, 1, 16, "geometry");
    s.geometry.slots_per_chassis = get_uint<std::uint32_t>(g, "slots_per_chassis", 16, 1, 64, "geometry");
    s.geometry.nodes_per_slot = get_uint<std::uint32_t>(g, "nodes_per_slot", 4, 1, 16, "geometry");
    s.geometry.cabinet_stride = get_uint<std::uint32_t>(g, "cabinet_stride", 0, 0, 65536, "geometry");
    if (s.geometry.cabinet_stride != 0 &&
        s.geometry.cabinet_stride < s.geometry.chassis_per_cabinet * s.geometry.chassis_stride())
      throw JsonError{"geometry.cabinet_stride: smaller than the nodes of a cabinet"};
  }
  if (!j.contains("layouts") || !j.at("layouts").is_array() || j.at("layouts").empty())
    throw JsonError{"system.layouts: expected a non-empty array"};
  for (const json& lj : j.at("layouts")) {
    check_keys(lj, "layout",
               {"name", "sockets", "segments_per_socket", "compute_units_per_segment",
                "threads_per_compute_unit", "architecture", "clock_mhz", "memory_mb", "page_size_kb",
                "labels", "accelerator"});
    Layout l;
    l.name = get_string(lj, "name", "", "layout");
    if (l.name.empty()) throw JsonError{"layout.name: required"};
    const std::string where = "layout " + l.name;
    l.sockets = get_uint<std::uint32_t>(lj, "sockets", 1, 1, 16, where);
    l.segments_per_socket = get_uint<std::uint32_t>(lj, "segments_per_socket", 1, 1, 16, where);
    l.cus_per_segment = get_uint<std::uint32_t>(lj, "compute_units_per_segment", 1, 1, 512, where);
    l.threads_per_cu = get_uint<std::uint32_t>(lj, "threads_per_compute_unit", 1, 1, 8, where);
    l.proc_arch = get_enum<basil::ProcArch>(lj, "architecture", basil::ProcArch::kX86_64, where);
    l.clock_mhz = get_uint<std::uint32_t>(lj, "clock_mhz", 2600, 1, 100000, where);
    l.memory_mb = get_uint<std::uint64_t>(lj, "memory_mb", 0, 1, std::uint64_t{1} << 32, where);
    l.page_size_kb = get_uint<std::uint32_t>(lj, "page_size_kb", 4, 4, 1u << 20, where);
    if (lj.contains("labels")) {
      if (!lj.at("labels").is_array()) throw JsonError{where + ".labels: expected an array"};
      for (const json& lab : lj.at("labels")) {
        check_keys(lab, where + ".labels", {"name", "type", "disposition"});
        basil::Label label;
        label.name = get_string(lab, "name", "", where);
        if (label.name.empty()) throw JsonError{where + ".labels: name required"};
        label.type = get_enum<basil::LabelType>(lab, "type", basil::LabelType::kHard, where);
        label.disposition =
            get_enum<basil::LabelDisposition>(lab, "disposition", basil::LabelDisposition::kAttract, where);
        l.labels.push_back(label);
      }
    }
    if (lj.contains("accelerator")) {
      const json& aj = lj.at("accelerator");
      check_keys(aj, where + ".accelerator", {"type", "family", "memory_mb", "clock_mhz"});
      AccelSpec a;
      a.type = get_string(aj, "type", "GPU", where);
      a.family = get_string(aj, "family", "UNKNOWN", where);
      a.memory_mb = get_uint<std::uint32_t>(aj, "memory_mb", 0, 0, 1u << 24, where);
      a.clock_mhz = get_uint<std::uint32_t>(aj, "clock_mhz", 0, 0, 100000, where);
      l.accel = a;
    }
    for (const Layout& other : s.layouts)
      if (other.name == l.name) throw JsonError{"layout " + l.name + ": defined twice"};
    s.layouts.push_back(l);
  }
  if (j.contains("nodes") && !j.at("nodes").is_array()) throw JsonError{"system.nodes: expected an array"};
  if (require_nodes && (!j.contains("nodes") || j.at("nodes").empty()))
    throw JsonError{"system.nodes: expected a non-empty array"};
  std::vector<NodeRange> ranges;
  for (const json& nj : j.value("nodes", json::array())) {
    check_keys(nj, "nodes", {"nids", "first_nid", "count", "layout", "role", "state", "architecture"});
    NodeRange proto;
    const std::string lname = get_string(nj, "layout", s.layouts.front().name, "nodes");
    auto it = std::find_if(s.layouts.begin(), s.layouts.end(), [&](const Layout& l) { return l.name == lname; });
    if (it == s.layouts.end()) throw JsonError{"nodes.layout: unknown layout '" + lname + "'"};
    proto.layout = static_cast<std::uint32_t>(it - s.layouts.begin());
    proto.role = get_enum<basil::NodeRole>(nj, "role", basil::NodeRole::kBatch, "nodes");
    proto.state = get_enum<basil::NodeState>(nj, "state", basil::NodeState::kUp, "nodes");
    proto.arch = get_enum<basil::NodeArch>(nj, "architecture", basil::NodeArch::kXT, "nodes");
    std::vector<basil::NidList::Range> rs;
    if (nj.contains("nids")) {
      if (nj.contains("first_nid") || nj.contains("count"))
        throw JsonError{"nodes: give either nids or first_nid/count"};
      auto list = basil::NidList::parse(get_string(nj, "nids", "", "nodes"));
      if (!list) throw JsonError{"nodes.nids: " + list.status().message()};
      for (const auto& r : list->ranges()) {
        for (std::uint64_t n = r.first; n <= r.second; ++n)
          if (!s.geometry.valid(static_cast<std::uint32_t>(n)))
            throw JsonError{"nodes.nids: NID " + std::to_string(n) + " is not a node position of the geometry"};
        rs.push_back(r);
      }
    } else {
      const auto first = get_uint<std::uint32_t>(nj, "first_nid", 0, 0, 1u << 30, "nodes");
      const auto count = get_uint<std::uint32_t>(nj, "count", 0, 1, 1u << 22, "nodes");
      rs = s.geometry.positions(first, count);
    }
    for (auto [a, b] : rs) {
      NodeRange r = proto;
      r.first = a;
      r.last = b;
      ranges.push_back(r);
    }
  }
  std::sort(ranges.begin(), ranges.end(), [](const NodeRange& a, const NodeRange& b) { return a.first < b.first; });
  for (std::size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first <= ranges[i - 1].last)
      throw JsonError{"nodes: NID " + std::to_string(ranges[i].first) + " listed twice"};
  s.nodes = merge_ranges(std::move(ranges));
  if (j.contains("faults")) s.faults = faults_from(j.at("faults"));
  return s;
}

}  // namespace

Result<System> parse_system(std::string_view json_text, bool require_nodes) {
  try {
    return system_from(json::parse(json_text), require_nodes);
  } catch (const JsonError& e) {
    return Status(Code::kInvalidValue, e.message);
  } catch (const json::exception& e) {
    return Status(Code::kMalformed, e.what());
  }
}

Result<FaultConfig> parse_faults(std::string_view json_text) {
  try {
    return faults_from(json::parse(json_text));
  } catch (const JsonError& e) {
    return Status(Code::kInvalidValue, e.message);
  } catch (const json::exception& e) {
    return Status(Code::kMalformed, e.what());
  }
}

std::string faults_to_json(const FaultConfig& faults) { return faults_json(faults).dump(); }

std::string system_to_json(const System& s) {
  json j;
  j["mpp_host"] = s.mpp_host;
  j["cle"] = s.cle;
  j["interconnect"] = s.gemini ? "gemini" : "aries";
  j["inventory_forms"] = s.inventory_forms;
  j["fsync"] = s.fsync;
  j["apsched"] = s.apsched_serial ? "serial" : "parallel";
  j["switch"] = json{{"enabled", s.switching.enabled},
                     {"switch_ms", s.switching.switch_ms},
                     {"max_coresident", s.switching.max_coresident},
                     {"empty_early", s.switching.empty_early}};
  j["geometry"] = json{{"rows", s.geometry.rows},
                       {"chassis_per_cabinet", s.geometry.chassis_per_cabinet},
                       {"slots_per_chassis", s.geometry.slots_per_chassis},
                       {"nodes_per_slot", s.geometry.nodes_per_slot},
                       {"cabinet_stride", s.geometry.cabinet_stride}};
  json layouts = json::array();
  for (const Layout& l : s.layouts) {
    json lj{{"name", l.name},
            {"sockets", l.sockets},
            {"segments_per_socket", l.segments_per_socket},
            {"compute_units_per_segment", l.cus_per_segment},
            {"threads_per_compute_unit", l.threads_per_cu},
            {"architecture", std::string(basil::to_string(l.proc_arch))},
            {"clock_mhz", l.clock_mhz},
            {"memory_mb", l.memory_mb},
            {"page_size_kb", l.page_size_kb}};
    json labels = json::array();
    for (const auto& lab : l.labels)
      labels.push_back(json{{"name", lab.name},
                            {"type", std::string(basil::to_string(lab.type))},
                            {"disposition", std::string(basil::to_string(lab.disposition))}});
    lj["labels"] = labels;
    if (l.accel)
      lj["accelerator"] = json{{"type", l.accel->type},
                               {"family", l.accel->family},
                               {"memory_mb", l.accel->memory_mb},
                               {"clock_mhz", l.accel->clock_mhz}};
    layouts.push_back(lj);
  }
  j["layouts"] = layouts;
  json nodes = json::array();
  for (const NodeRange& r : s.nodes) {
    nodes.push_back(json{{"nids", std::to_string(r.first) + "-" + std::to_string(r.last)},
                         {"layout", s.layouts.at(r.layout).name},
                         {"role", std::string(basil::to_string(r.role))},
                         {"state", std::string(basil::to_string(r.state))},
                         {"architecture", std::string(basil::to_string(r.arch))}});
  }
  j["nodes"] = nodes;
  j["faults"] = faults_json(s.faults);
  return j.dump(1);
}

std::string method_key(const basil::Request& request) {
  if (request.method() == basil::Method::kQuery) {
    auto t = request.query_type();
    return t ? std::string(basil::to_string(*t)) : "QUERY";
  }
  return std::string(basil::to_string(request.method()));
}

}  // namespace emu
