#include "emulator/apsched/apstat.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "emulator/apsched/clients.h"
#include "emulator/store/store.h"

namespace emu::apsched {

namespace {

__attribute__((format(printf, 1, 2))) std::string printf_line(const char* format, ...) {
  char buf[512];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  return std::string(buf, static_cast<std::size_t>(std::clamp(n, 0, static_cast<int>(sizeof buf) - 1)));
}

const ApplicationRec* placeholder(const State& s, std::uint64_t resid) {
  for (const auto& [id, a] : s.applications)
    if (a.reservation_id == resid && a.time_stamp == 0) return &a;
  return nullptr;
}

// "unbound" until CONFIRM, then "conf"; ",claim" while apruns run in it,
// ",rel" once released with claims, ",sus" while switched out.
std::string reservation_state(const State& s, const ReservationRec& r) {
  std::string out = r.confirmed ? "conf" : "unbound";
  if (s.claims(r.reservation_id) > 0) out += ",claim";
  if (r.released) out += ",rel";
  if (r.suspended) out += ",sus";
  return out;
}

std::string utc(std::uint64_t seconds) {
  const auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string user_of(const State& s, const ApplicationRec& a) {
  const auto it = s.reservations.find(a.reservation_id);
  return it != s.reservations.end() ? it->second.user_name : std::to_string(a.user_id);
}

std::string reservation_lines(const State& s, const ReservationRec& r, bool verbose) {
  const ApplicationRec* p = placeholder(s, r.reservation_id);
  const std::vector<basil::Command> none(1);
  const std::vector<basil::Command>& cmds = p != nullptr && !p->commands.empty() ? p->commands : none;
  const std::string from = "batch:" + r.batch_id;
  const bool active = s.claims(r.reservation_id) > 0;
  std::string out;
  for (const basil::Command& c : cmds) {
    const std::string nppn = c.nppn == 0 ? "-" : std::to_string(c.nppn);
    out += printf_line("%1s %6llu %8llu %-20s %-4s %5llu %3s %3u %6llu %s\n", active ? "A" : "",
                       static_cast<unsigned long long>(r.reservation_id),
                       static_cast<unsigned long long>(p != nullptr ? p->application_id : 0), from.c_str(),
                       c.architecture.c_str(), static_cast<unsigned long long>(c.width), nppn.c_str(), c.depth,
                       static_cast<unsigned long long>(c.memory), reservation_state(s, r).c_str());
  }
  if (!verbose) return out;
  for (std::size_t i = 0; i < cmds.size(); ++i)
    out += "Res[" + std::to_string(i) + "]: apid " + std::to_string(p != nullptr ? p->application_id : 0) + ", pagg " +
           std::to_string(r.pagg_id) + ", resId " + std::to_string(r.reservation_id) + ", user " + r.user_name +
           ", gid " + std::to_string(p != nullptr ? p->group_id : 0) + ", account " + r.account_name + ", time " +
           std::to_string(r.time_stamp) + ", " + (r.suspended ? "suspended" : "normal") + "\n";
  out += "Batch System ID = " + r.batch_id + "\n";
  out += r.mode == basil::ReservationMode::kExclusive ? "Reservation flags = 0x200 (exclusive)\n"
                                                      : "Reservation flags = 0x0 (shared)\n";
  return out;
}

}  // namespace

std::string format_reservations(const State& s, bool verbose) {
  std::string out = "  ResId     ApId From                 Arch   PEs   N   d Memory State\n";
  for (const auto& [id, r] : s.reservations) out += reservation_lines(s, r, verbose);
  return out;
}

std::string format_applications(const State& s, bool verbose) {
  std::string rows;
  std::size_t count = 0;
  for (const auto& [id, a] : s.applications) {
    if (a.time_stamp == 0) continue;
    ++count;
    const auto res = s.reservations.find(a.reservation_id);
    const bool suspended = res != s.reservations.end() && res->second.suspended;
    const basil::Command c = a.commands.empty() ? basil::Command{} : a.commands.front();
    rows += printf_line("%9llu %6llu %10s %5llu %-5s %19s  %s\n", static_cast<unsigned long long>(id),
                        static_cast<unsigned long long>(a.reservation_id), user_of(s, a).c_str(),
                        static_cast<unsigned long long>(c.width), suspended ? "sus" : "run",
                        utc(a.time_stamp).c_str(), c.cmd.c_str());
    if (verbose)
      rows += "Ap[" + std::to_string(count - 1) + "]: apid " + std::to_string(id) + ", resId " +
              std::to_string(a.reservation_id) + ", uid " + std::to_string(a.user_id) + ", gid " +
              std::to_string(a.group_id) + ", width " + std::to_string(c.width) + ", depth " +
              std::to_string(c.depth) + ", nppn " + std::to_string(c.nppn) + ", time " +
              std::to_string(a.time_stamp) + "\n";
  }
  return "Total placed applications: " + std::to_string(count) + "\n" +
         "     Apid  ResId       User   PEs State Start (UTC)          Command\n" + rows;
}

int apstat_main(const std::vector<std::string>& words, const Where& where) {
  bool reservations = false, applications = false, verbose = false;
  for (const std::string& w : words) {
    if (w.size() < 2 || w[0] != '-') return std::cerr << "usage: apstat [-r] [-a] [-v]\n", 1;
    for (char c : w.substr(1)) {
      if (c == 'r') reservations = true;
      else if (c == 'a') applications = true;
      else if (c == 'v') verbose = true;
      else return std::cerr << "apstat: unknown option -" << c << "\nusage: apstat [-r] [-a] [-v]\n", 1;
    }
  }
  if (!reservations && !applications) reservations = applications = true;
  if (where.state_dir.empty())
    return std::cerr << "apstat: no state directory (--state DIR or BASIL_EMULATOR_STATE)\n", 1;
  auto store = Store::open(where.state_dir);
  auto state = store ? (*store)->load() : basil::Result<State>(store.status());
  if (!state) return std::cerr << "apstat: " << state.status().message() << "\n", 1;
  if (applications) std::cout << format_applications(*state, verbose);
  if (reservations && applications) std::cout << "\n";
  if (reservations) std::cout << format_reservations(*state, verbose);
  return 0;
}

}  // namespace emu::apsched
