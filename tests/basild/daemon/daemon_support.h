// The real basild binary against the real emulator binary, for integration
// tests: a config in a temp dir, the daemon started, its control socket.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "basil_proto/codec.h"
#include "tests/basild/io/emulator_support.h"
#include "basild/control_client/client.h"
#include "tests/support/files.h"
#include "tests/support/proc.h"
#include "tests/support/sanitized.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait.h"

namespace basild::testing {

using nlohmann::json;
using namespace std::chrono_literals;

// basil_test::wait_until, looking every 50 ms: each look asks basild or runs
// the emulator, which the daemon under test shares the machine with.
template <typename Ready>
inline bool wait_until(Ready ready, std::chrono::milliseconds limit) {
  return basil_test::wait_until(ready, limit, 50ms);
}

class Daemon {
 public:
  static constexpr const char* kFastPolls =
      "[poll]\ninterval = \"1s\"\ninventory_max_age = \"1s\"\norphan_check_interval = \"1s\"\n";
  // apbasil's time-out in every Daemon's configuration: room for an
  // xc30-2256 INVENTORY on a loaded machine, kSlowdown times that under ASan
  // (where one emulator call can take over a second). A test that needs
  // another replaces apbasil_timeout_line() in basild.conf (edit_conf).
  static constexpr std::chrono::seconds kApbasilTimeout{2 * basil_test::kSlowdown};
  static std::string apbasil_timeout_line() {
    return "timeout = \"" + std::to_string(kApbasilTimeout.count()) + "s\"";
  }
  // `extra_conf` is appended; `poll_conf` replaces the [poll] section.
  explicit Daemon(const std::string& tag, const std::string& preset = "tds-8", const std::string& cle = "",
                  const std::string& extra_conf = "", const std::string& poll_conf = kFastPolls)
      : dir_(make_temp_dir(tag)), emu_(init_emulator(tag + "-emu", preset, cle)) {
    std::ofstream conf(dir_ + "/basild.conf");
    conf << "[apbasil]\npath = \"" << testing::emulator_path() << "\"\nargs = [\"--state\", \"" << emu_
         << "\"]\n" << apbasil_timeout_line() << "\n"
         << "[state]\ndatabase = \"" << dir_ << "/state.db\"\n"
         << "[control]\nsocket = \"" << dir_ << "/control.sock\"\nmode = \"0666\"\n"
         << "[log]\ndirectory = \"" << dir_ << "\"\n"
         << poll_conf << extra_conf;
  }
  // basild killed; an apbasil it left hanging (the emulator with a hang
  // fault, in a process group of its own) goes too.
  ~Daemon() {
    stop(SIGKILL);
    basil_test::kill_processes_mentioning(emu_);
  }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  const std::string& dir() const { return dir_; }
  const std::string& emu() const { return emu_; }
  std::string socket() const { return dir_ + "/control.sock"; }
  std::string log() const { return basil_test::read_file(dir_ + "/basild.log"); }

  // Starts basild (`args` after its --config); with `wait`, until it
  // answers health with ALPS reachable (a failure of the test if it does
  // not within 20 s).
  pid_t start(bool wait = true, bool xml_log = false, const std::vector<std::string>& args = {}) {
    std::vector<std::string> argv = {std::string(BASIL_BINARY_DIR) + "/basild/basild", "--config",
                                     dir_ + "/basild.conf"};
    argv.insert(argv.end(), args.begin(), args.end());
    basild_ = basil_test::Subprocess(
        argv,
        {.err = basil_test::Redirect::file(dir_ + "/basild.log", /*append=*/true),
         .env = start_env(xml_log)});
    EXPECT_TRUE(basild_.started()) << basild_.error();
    if (wait) {
      const auto up = basil_test::wait_while_running(
          basild_,
          [&] {
            auto h = get("/v1/health");
            return h.is_object() && h.value("alps_reachable", false) && !h["inventory_age_s"].is_null();
          },
          20s);
      EXPECT_NE(up, basil_test::Awaited::kEnded) << "basild exited at start-up: " << log();
      EXPECT_NE(up, basil_test::Awaited::kTimedOut) << "basild did not come up with ALPS reachable: " << log();
    }
    return basild_.pid();
  }

  // NAME=value added to basild's environment from its next start on
  // (SLURM_CONF for its squeue and scontrol).
  void set_env(std::vector<std::string> env) { env_ = std::move(env); }

  // `sig` to basild, then its wait status once it has ended.
  int stop(int sig = SIGTERM) {
    if (!basild_.started()) return -1;
    basild_.signal(sig);
    const int st = basild_.wait().status;
    basild_ = basil_test::Subprocess();
    return st;
  }

  // basild's wait status once it has ended by itself within `limit`, or
  // -1 if it is still running then (and is left running).
  int exit_within(std::chrono::milliseconds limit) {
    if (!basild_.started()) return -1;
    const auto ended = basild_.wait_for(limit);
    if (!ended) return -1;
    basild_ = basil_test::Subprocess();
    return ended->status;
  }

  json call(const std::string& method, const std::string& path, const std::string& body = "",
            unsigned* status = nullptr) const {
    control::Client c(socket());
    auto r = c.request(method, path, body, "application/json", 30s);
    if (status != nullptr) *status = r.ok() ? r.status : 0;
    if (!r.ok()) return json();
    return json::parse(r.body, nullptr, false);
  }
  json get(const std::string& path) const { return call("GET", path); }

  // The audit entries of `kind` ("release", "state", "orphan", ...) about
  // reservation `res_id`, oldest first.
  json events_of(const std::string& kind, std::uint64_t res_id) const {
    json out = json::array();
    for (const auto& e : get("/v1/events?limit=1000").value("events", json::array()))
      if (e.value("kind", "") == kind && e["reservation_id"].is_number() &&
          e["reservation_id"].get<std::uint64_t>() == res_id)
        out.push_back(e);
    return out;
  }

  json reserve(const std::string& batch, unsigned* status = nullptr, std::uint64_t width = 32) const {
    json body = {{"batch_id", batch}, {"user", "alice"}, {"params", {{{"width", width}}}}};
    return call("POST", "/v1/reserve", body.dump(), status);
  }

  // Reservations ALPS holds, with their batch_id, asked of the emulator directly.
  std::map<std::uint64_t, std::string> alps_batch_ids() const {
    auto out = run_command("echo '<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"INVENTORY\"><Inventory>"
                           "<ReservationArray/></Inventory></BasilRequest>' | " +
                           testing::emulator_path() + " --state " + emu_);
    std::map<std::uint64_t, std::string> held;
    auto r = basil::decode_response(out.out);
    if (!r) {
      ADD_FAILURE() << r.status().to_string() << "\n" << out.out;
      return held;
    }
    for (const auto& res : std::get<basil::Inventory>(r->body).reservations)
      held[res.reservation_id] = res.batch_id.value_or("");
    return held;
  }
  std::set<std::uint64_t> alps_reservations() const {
    std::set<std::uint64_t> ids;
    for (const auto& [id, batch] : alps_batch_ids()) ids.insert(id);
    return ids;
  }

  std::set<std::uint64_t> basild_reservations() const {
    std::set<std::uint64_t> ids;
    auto j = get("/v1/reservations");
    if (j.contains("reservations"))
      for (const auto& r : j["reservations"]) ids.insert(r["reservation_id"].get<std::uint64_t>());
    return ids;
  }

  // Waits until basild has taken an INVENTORY that started after now.
  void wait_for_poll() const {
    const auto polls = get("/v1/stats").value("polls", 0);
    EXPECT_TRUE(wait_until([&] { return get("/v1/stats").value("polls", 0) >= polls + 2; }, 10s))
        << "basild did not poll";
  }

 private:
  std::vector<std::string> start_env(bool xml_log) const {
    std::vector<std::string> e = env_;
    if (xml_log) e.push_back("XML_LOG=1");
    return e;
  }

  std::string dir_;
  std::string emu_;
  std::vector<std::string> env_;
  basil_test::Subprocess basild_;
};

// An answer over HTTP: its status (0: none) and body.
struct Got {
  int status = 0;
  std::string body;
};

// curl, a client as a site has it (the [metrics] listener's): the body and
// the HTTP status.
inline Got curl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"curl", "-sS", "--max-time", "20", "-o", "-", "-w", "\n%{http_code}"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = basil_test::run(argv, {}, {.err = basil_test::Redirect::pipe(), .search_path = true});
  Got g;
  const auto nl = r.out.rfind('\n');
  if (r.exit_code != 0 || nl == std::string::npos) return g;
  g.status = std::atoi(r.out.c_str() + nl + 1);
  g.body = r.out.substr(0, nl);
  return g;
}

// A job table the test edits: the command prints the file.
struct JobTable {
  std::string file = make_temp_dir("jobtable") + "/live";
  std::string script = write_script("jobcmd", "cat '" + file + "'");
  explicit JobTable(const std::string& ids = "") { set(ids); }
  void set(const std::string& ids) const {
    std::ofstream(file + ".tmp") << ids;
    std::rename((file + ".tmp").c_str(), file.c_str());
  }
  std::string source() const {
    return "[[reconcile.source]]\ntype = \"command\"\nname = \"jobs\"\ncommand = [\"" + script + "\"]\ntimeout = \"5s\"\n";
  }
};

inline std::string fast_polls(const std::string& interval = "200ms", const std::string& max_age = "1m",
                       const std::string& mode = "summary-hybrid") {
  return "[poll]\nmode = \"" + mode + "\"\ninterval = \"" + interval + "\"\ninventory_max_age = \"" + max_age +
         "\"\norphan_check_interval = \"" + interval + "\"\n";
}

inline std::string reconcile(const std::string& grace, const std::string& extra = "") {
  return "[reconcile]\ngrace = \"" + grace + "\"\nconsecutive = 3\n" + extra;
}

}  // namespace basild::testing
