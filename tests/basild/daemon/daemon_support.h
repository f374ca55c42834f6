// The real basild binary against the real emulator binary, for integration
// tests: a config in a temp dir, the daemon forked, its control socket.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "basil_proto/codec.h"
#include "tests/basild/io/emulator_support.h"
#include "basild/control_client/client.h"

namespace basild::testing {

using nlohmann::json;
using namespace std::chrono_literals;

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class Daemon {
 public:
  static constexpr const char* kFastPolls =
      "[poll]\ninterval = \"1s\"\ninventory_max_age = \"1s\"\norphan_check_interval = \"1s\"\n";
  // `extra_conf` is appended; `poll_conf` replaces the [poll] section.
  explicit Daemon(const std::string& tag, const std::string& preset = "tds-8", const std::string& cle = "",
                  const std::string& extra_conf = "", const std::string& poll_conf = kFastPolls)
      : dir_(make_temp_dir(tag)), emu_(init_emulator(tag + "-emu", preset, cle)) {
    std::ofstream conf(dir_ + "/basild.conf");
    conf << "[apbasil]\npath = \"" << testing::emulator_path() << "\"\nargs = [\"--state\", \"" << emu_
         << "\"]\ntimeout = \"2s\"\n"
         << "[state]\ndatabase = \"" << dir_ << "/state.db\"\n"
         << "[control]\nsocket = \"" << dir_ << "/control.sock\"\nmode = \"0666\"\n"
         << "[log]\ndirectory = \"" << dir_ << "\"\n"
         << poll_conf << extra_conf;
  }
  ~Daemon() { stop(SIGKILL); }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  const std::string& dir() const { return dir_; }
  const std::string& emu() const { return emu_; }
  std::string socket() const { return dir_ + "/control.sock"; }
  std::string log() const { return slurp(dir_ + "/basild.log"); }

  // Starts basild; with `wait`, until it answers health with ALPS reachable.
  pid_t start(bool wait = true, bool xml_log = false) {
    pid_t pid = ::fork();
    if (pid == 0) {
      std::string log_path = dir_ + "/basild.log";
      FILE* f = std::freopen(log_path.c_str(), "a", stderr);
      (void)f;
      if (xml_log) ::setenv("XML_LOG", "1", 1);
      std::string bin = std::string(BASIL_BINARY_DIR) + "/basild/basild";
      std::string conf = dir_ + "/basild.conf";
      ::execl(bin.c_str(), bin.c_str(), "--config", conf.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    pid_ = pid;
    if (wait) {
      for (int i = 0; i < 200; ++i) {
        auto h = get("/v1/health");
        if (h.is_object() && h.value("alps_reachable", false) && !h["inventory_age_s"].is_null()) break;
        std::this_thread::sleep_for(50ms);
      }
    }
    return pid;
  }

  int stop(int sig = SIGTERM) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, sig);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
    return st;
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
    for (const auto& e : get("/v1/events").value("events", json::array()))
      if (e.value("kind", "") == kind && e["reservation_id"].is_number() &&
          e["reservation_id"].get<std::uint64_t>() == res_id)
        out.push_back(e);
    return out;
  }

  json reserve(const std::string& batch, unsigned* status = nullptr, std::uint64_t width = 32) const {
    json body = {{"batch_id", batch}, {"user", "alice"}, {"params", {{{"width", width}}}}};
    return call("POST", "/v1/reserve", body.dump(), status);
  }

  // Reservations ALPS holds, asked of the emulator directly.
  std::set<std::uint64_t> alps_reservations() const {
    auto out = run_command("echo '<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"INVENTORY\"><Inventory>"
                           "<ReservationArray/></Inventory></BasilRequest>' | " +
                           testing::emulator_path() + " --state " + emu_);
    std::set<std::uint64_t> ids;
    auto r = basil::decode_response(out.out);
    if (!r) {
      ADD_FAILURE() << r.status().to_string() << "\n" << out.out;
      return ids;
    }
    for (const auto& res : std::get<basil::Inventory>(r->body).reservations) ids.insert(res.reservation_id);
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
    auto before = get("/v1/stats");
    auto polls = before.value("polls", 0);
    for (int i = 0; i < 100; ++i) {
      std::this_thread::sleep_for(100ms);
      if (get("/v1/stats").value("polls", 0) >= polls + 2) return;
    }
    ADD_FAILURE() << "basild did not poll";
  }

 private:
  std::string dir_;
  std::string emu_;
  pid_t pid_ = -1;
};

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

inline bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return done();
}

}  // namespace basild::testing
