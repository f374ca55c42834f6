// The emulator store's rows: the world loaded from its tables and a Delta written back
// (Store::Impl, store_internal.h), and processor sets as text.
#include "emulator/store/store_internal.h"

#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "basil_proto/ranges.h"

namespace emu {

using namespace store_detail;

namespace {

template <typename E>
E enum_or(const std::string& text, E fallback) {
  return basil::parse_enum<E>(text).value_or(fallback);
}

std::string commands_json(const std::vector<basil::Command>& cmds) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& c : cmds)
    a.push_back({{"width", c.width}, {"depth", c.depth}, {"nppn", c.nppn}, {"memory", c.memory},
                 {"architecture", c.architecture}, {"cmd", c.cmd}});
  return a.dump();
}

std::vector<basil::Command> commands_from(const std::string& text) {
  std::vector<basil::Command> out;
  const auto a = nlohmann::json::parse(text, nullptr, false);
  if (!a.is_array()) return out;
  for (const auto& j : a) {
    basil::Command c;
    c.width = j.value("width", std::uint64_t{0});
    c.depth = j.value("depth", std::uint32_t{0});
    c.nppn = j.value("nppn", std::uint32_t{0});
    c.memory = j.value("memory", std::uint64_t{0});
    c.architecture = j.value("architecture", std::string("XT"));
    c.cmd = j.value("cmd", std::string());
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::string format_indices(const std::vector<std::uint32_t>& v) { return basil::format_ranges(v); }

Result<std::vector<std::uint32_t>> parse_indices(std::string_view text) {
  std::vector<std::uint32_t> out;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    std::uint32_t a = 0, b = 0;
    const auto dash = item.find('-');
    const std::string_view first = item.substr(0, dash);
    auto r = std::from_chars(first.data(), first.data() + first.size(), a);
    if (r.ec != std::errc() || r.ptr != first.data() + first.size())
      return Status(Code::kInvalidValue, "bad processor list item '" + std::string(item) + "'");
    b = a;
    if (dash != std::string_view::npos) {
      const std::string_view second = item.substr(dash + 1);
      r = std::from_chars(second.data(), second.data() + second.size(), b);
      if (r.ec != std::errc() || r.ptr != second.data() + second.size() || b < a)
        return Status(Code::kInvalidValue, "bad processor list item '" + std::string(item) + "'");
    }
    for (std::uint64_t x = a; x <= b; ++x) out.push_back(static_cast<std::uint32_t>(x));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

void Store::Impl::load_into(State& s, Store::Scope scope) {
  sqlite3* d = db.get();
  std::uint64_t version = 0;
  {
    Stmt st(d, kSelectSchemaVersion);
    if (st.step()) version = st.u(0);
  }
  if (version == 1) {  // a state made before SWITCH took time: every reservation settled
    exec(d, kMigrate1To2);
    version = 2;
  }
  if (version != kSchemaVersion)
    throw SqlError{SQLITE_MISMATCH, "unsupported schema version (expected " + std::to_string(kSchemaVersion) + ")"};
  {
    Stmt st(d, kSelectMeta);
    bool have_system = false;
    std::string faults;
    while (st.step()) {
      const std::string key = st.s(0);
      if (key == "system") {
        auto sys = parse_system(st.s(1), false);
        if (!sys) throw SqlError{SQLITE_CORRUPT, "stored system: " + sys.status().message()};
        s.system = std::move(*sys);
        have_system = true;
      } else if (key == "faults") {
        faults = st.s(1);
      }
    }
    if (!have_system) throw SqlError{SQLITE_CORRUPT, "no system description in the database"};
    s.faults = s.system.faults;
    if (!faults.empty()) {
      auto f = parse_faults(faults);
      if (!f) throw SqlError{SQLITE_CORRUPT, "stored faults: " + f.status().message()};
      s.faults = *f;
    }
  }
  {
    Stmt st(d, kSelectCounters);
    if (!st.step()) throw SqlError{SQLITE_CORRUPT, "no counters row"};
    s.counters = Counters{st.u(0), st.u(1), st.u(2), st.u(3), st.u(4)};
  }
  {
    Stmt st(d, kSelectRanges);
    s.nodes.clear();
    while (st.step()) {
      NodeRange r;
      r.first = st.u32(0);
      r.last = st.u32(1);
      r.layout = st.u32(2);
      if (r.layout >= s.system.layouts.size()) throw SqlError{SQLITE_CORRUPT, "node range with unknown layout"};
      r.role = enum_or(st.s(3), basil::NodeRole::kUnknown);
      r.state = enum_or(st.s(4), basil::NodeState::kUnknown);
      r.arch = enum_or(st.s(5), basil::NodeArch::kUnknown);
      r.accel_state = enum_or(st.s(6), basil::AccelState::kUnknown);
      s.nodes.push_back(r);
    }
  }
  if (scope == Store::Scope::kNodes) return;
  {
    Stmt st(d, kSelectReservations);
    while (st.step()) {
      ReservationRec r;
      r.reservation_id = st.u(0);
      r.user_name = st.s(1);
      r.account_name = st.s(2);
      r.batch_id = st.s(3);
      r.mode = enum_or(st.s(4), basil::ReservationMode::kExclusive);
      r.gpc_mode = enum_or(st.s(5), basil::GpcMode::kNone);
      r.time_stamp = st.u(6);
      r.pagg_id = st.u(7);
      r.confirmed = st.u(8) != 0;
      r.released = st.u(9) != 0;
      r.suspended = st.u(10) != 0;
      r.switch_done_ms = st.u(11);
      s.reservations.emplace(r.reservation_id, std::move(r));
    }
  }
  {
    Stmt st(d, kSelectAllocations);
    while (st.step()) {
      Allocation a;
      a.reservation_id = st.u(0);
      a.nid = st.u32(1);
      auto procs = parse_indices(st.s(2));
      if (!procs) throw SqlError{SQLITE_CORRUPT, procs.status().message()};
      a.processors = std::move(*procs);
      a.pages = st.u(3);
      a.accelerator = st.u(4) != 0;
      a.exclusive = st.u(5) != 0;
      s.allocations[a.reservation_id].push_back(std::move(a));
    }
  }
  {
    Stmt st(d, kSelectApplications);
    while (st.step()) {
      ApplicationRec a;
      a.application_id = st.u(0);
      a.reservation_id = st.u(1);
      a.user_id = st.u32(2);
      a.group_id = st.u32(3);
      a.time_stamp = st.u(4);
      a.commands = commands_from(st.s(5));
      s.applications.emplace(a.application_id, std::move(a));
    }
  }
}

void Store::Impl::write_counters(const Counters& c) {
  Stmt st(db.get(), kPutCounters);
  st.bind(1, c.changecount).bind(2, c.schedchangecount).bind(3, c.next_reservation_id)
      .bind(4, c.next_application_id).bind(5, c.request_seq);
  st.run();
}

void Store::Impl::write_ranges(const std::vector<NodeRange>& ranges) {
  exec(db.get(), kDeleteRanges);
  Stmt st(db.get(), kInsertRange);
  for (const NodeRange& r : ranges) {
    st.bind(1, r.first).bind(2, r.last).bind(3, r.layout).bind(4, basil::to_string(r.role))
        .bind(5, basil::to_string(r.state)).bind(6, basil::to_string(r.arch))
        .bind(7, basil::to_string(r.accel_state));
    st.run();
  }
}

// The fsync setting's copy that connections read when they open (see
// kUserVersion). PRAGMA takes no bound parameter; the value is 0 or 1.
void Store::Impl::write_fsync_bit(bool fsync) {
  exec(db.get(), (std::string(kUserVersion) + "=" + (fsync ? "1" : "0")).c_str());
}

void Store::Impl::write(const Delta& d) {
  sqlite3* db_ = db.get();
  if (!d.remove_reservations.empty()) {
    Stmt a(db_, kDeleteReservation), b(db_, kDeleteAllocations), c(db_, kDeleteReservationApps);
    for (std::uint64_t id : d.remove_reservations) {
      a.bind(1, id).run();
      b.bind(1, id).run();
      c.bind(1, id).run();
    }
  }
  if (!d.remove_applications.empty()) {
    Stmt a(db_, kDeleteApplication);
    for (std::uint64_t id : d.remove_applications) a.bind(1, id).run();
  }
  if (!d.put_reservations.empty()) {
    Stmt st(db_, kPutReservation);
    for (const ReservationRec& r : d.put_reservations) {
      st.bind(1, r.reservation_id).bind(2, r.user_name).bind(3, r.account_name).bind(4, r.batch_id)
          .bind(5, basil::to_string(r.mode)).bind(6, basil::to_string(r.gpc_mode)).bind(7, r.time_stamp)
          .bind(8, r.pagg_id).bind(9, std::uint64_t{r.confirmed}).bind(10, std::uint64_t{r.released})
          .bind(11, std::uint64_t{r.suspended}).bind(12, r.switch_done_ms);
      st.run();
    }
  }
  if (!d.add_allocations.empty()) {
    Stmt st(db_, kInsertAllocation);
    for (const Allocation& a : d.add_allocations) {
      st.bind(1, a.reservation_id).bind(2, a.nid).bind(3, format_indices(a.processors)).bind(4, a.pages)
          .bind(5, std::uint64_t{a.accelerator}).bind(6, std::uint64_t{a.exclusive});
      st.run();
    }
  }
  if (!d.add_applications.empty()) {
    Stmt st(db_, kInsertApplication);
    for (const ApplicationRec& a : d.add_applications) {
      st.bind(1, a.application_id).bind(2, a.reservation_id).bind(3, a.user_id).bind(4, a.group_id)
          .bind(5, a.time_stamp).bind(6, commands_json(a.commands));
      st.run();
    }
  }
  if (d.nodes) write_ranges(*d.nodes);
  if (d.faults) {
    Stmt st(db_, kPutMeta);
    st.bind(1, std::string("faults")).bind(2, faults_to_json(*d.faults)).run();
  }
  if (d.system) {
    Stmt st(db_, kPutMeta);
    st.bind(1, std::string("system")).bind(2, system_to_json(stored_system(*d.system))).run();
    write_fsync_bit(d.system->fsync);
  }
  if (d.counters) write_counters(*d.counters);
}

}  // namespace emu
