// The ALPS sides of bench/slurm_jobs.cc's variants, each against an
// emulated tds-8 of its own under BIN/slurm-tests (BIN: the build tree):
// basild, its apbasil run locally or through the ssh gateway to a real
// sshd; or the alps-only hooks (bench/alps_hook.cc), which call the
// emulator themselves. basild is stopped and each one's directory removed
// with the object.
#pragma once

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "basild/control_client/client.h"
#include "tests/support/files.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace basil::bench {

using namespace std::chrono_literals;
using nlohmann::json;

// `built` placed at `at` as a program Slurm can run by its path: a hard
// link, or a copy (mode 0755) across file systems.
inline void place_program(const std::string& built, const std::string& at) {
  if (::link(built.c_str(), at.c_str()) == 0) return;
  basil_test::write_file(at, basil_test::read_file(built));
  ::chmod(at.c_str(), 0755);
}

// basil-slurm's shipped set-up in `dir` (which Slurm must be able to
// read): the program as PrologSlurmctld and EpilogSlurmctld, and the
// basil_reservation plugin confirming through basild. The slurm.conf lines
// that name them.
inline std::string shipped_hooks(const std::string& dir, const std::string& bin) {
  const std::string program = dir + "/basil-slurm";
  place_program(bin + "/slurm/basil-slurm-bench", program);
  basil_test::write_file(dir + "/plugstack.conf", "required " + bin +
                                                      "/slurm/spank/basil_reservation.so confirm=basild basil_slurm=" +
                                                      program + "\n");
  return "PrologSlurmctld=" + program + "\nEpilogSlurmctld=" + program + "\nPlugStackConfig=" + dir +
         "/plugstack.conf\n";
}

// The configuration beside shipped_hooks' program: basild's socket and
// Slurm's configuration.
inline void shipped_hooks_config(const std::string& dir, const std::string& socket, const std::string& slurm_conf) {
  basil_test::write_file(dir + "/basil-slurm.conf", "[basild]\nsocket = \"" + socket + "\"\n[slurm]\nslurm_conf = \"" +
                                                        slurm_conf + "\"\n[log]\nsyslog = false\n");
}

// A job's environment for aprun, apkill and apstat on the emulated Cray
// whose state is `emu`.
inline std::vector<std::string> cray_env(const std::string& bin, const std::string& emu) {
  const char* path = std::getenv("PATH");
  return {"PATH=" + bin + "/emulator:" + std::string(path ? path : "/usr/bin:/bin"), "BASIL_EMULATOR_STATE=" + emu};
}

// basild against a fresh emulated system (tds-8 unless `preset` names
// another), apbasil local or through the gateway; `more_conf` is appended
// to its basild.conf.
class Basild {
 public:
  Basild(const std::string& path, const std::string& bin, const std::string& preset = "tds-8",
         const std::string& more_conf = "")
      : dir_("slurm-jobs-basild", bin + "/slurm-tests") {
    const std::string emu = dir() + "/emu";
    basil_test::run({bin + "/emulator/basil-emulator", "init", "--preset", preset, "--state", emu});
    std::ofstream conf(dir() + "/basild.conf");
    conf << "[state]\ndatabase = \"" << dir() << "/state.db\"\n"
         << "[control]\nsocket = \"" << socket() << "\"\nmode = \"0666\"\n"
         << "[log]\ndirectory = \"" << dir() << "\"\n";
    if (path == "gateway" || path == "gateway3") {
      // gateway3: three login nodes ([conduit] hosts), each a real sshd.
      sshd_.emplace();
      std::vector<basil_test::TestSshd*> more;
      if (path == "gateway3")
        for (int i = 0; i < 2; ++i) more.push_back(&more_sshds_.emplace_back());
      basil_test::as_login_nodes(*sshd_, more);
      for (std::size_t i = 0; i <= more.size(); ++i)
        if (!login_node(i).Start()) std::fprintf(stderr, "sshd: %s\n", login_node(i).error().c_str());
      conf << basil_test::conduit_conf(*sshd_, "ssh-gateway", bin + "/emulator/basil-emulator", emu, bin,
                                       {more.begin(), more.end()});
    } else {
      conf << "[apbasil]\npath = \"" << bin << "/emulator/basil-emulator\"\nargs = [\"--state\", \"" << emu
           << "\"]\n";
    }
    conf << more_conf;
    conf.close();
    ::chmod(dir().c_str(), 0755);
    process_ = basil_test::Subprocess({bin + "/basild/basild", "--config", dir() + "/basild.conf"},
                                      {.err = basil_test::Redirect::file(dir() + "/basild.log")});
  }
  ~Basild() {
    process_.signal(SIGTERM);
    process_.wait();
  }
  bool up() const {
    return basil_test::wait_until(
        [&] {
          auto h = get("/v1/health");
          return h.is_object() && h.value("alps_reachable", false) && h["inventory_age_s"].is_number();
        },
        60s, 50ms);
  }
  json get(const std::string& target) const {
    basild::control::Client c(socket());
    auto r = c.request("GET", target, "", "", 10s);
    return r.ok() ? json::parse(r.body, nullptr, false) : json();
  }
  // The transport figures of basild's own `kind` calls (count, sum and p50
  // in seconds, ...), empty when it made none.
  json transport_of(const std::string& kind) const {
    const json stats = get("/v1/stats");  // kept: a range over a temporary's member dangles
    for (const auto& c : stats["calls"])
      if (c.value("caller", "") == "basild" && c.value("kind", "") == kind) return c["transport"];
    return json::object();
  }
  // Their median, in ms.
  double median_ms(const std::string& kind) const { return transport_of(kind).value("p50", 0.0) * 1e3; }
  // How many so far, and their transport time in all, in seconds.
  std::pair<double, double> transport_total(const std::string& kind) const {
    const json t = transport_of(kind);
    return {t.value("count", 0.0), t.value("sum", 0.0)};
  }
  std::size_t held() const { return get("/v1/reservations").value("reservations", json::array()).size(); }
  // The i-th login node's sshd (from 0) of the gateway paths.
  basil_test::TestSshd& login_node(std::size_t i) { return i == 0 ? *sshd_ : more_sshds_.at(i - 1); }
  std::size_t login_nodes() const { return sshd_ ? 1 + more_sshds_.size() : 0; }
  std::string dir() const { return dir_.path(); }
  std::string emu() const { return dir() + "/emu"; }
  std::string socket() const { return dir() + "/control.sock"; }
  std::string log() const { return basil_test::read_file(dir() + "/basild.log"); }

 private:
  basil_test::TempDir dir_;
  std::optional<basil_test::TestSshd> sshd_;
  std::deque<basil_test::TestSshd> more_sshds_;
  basil_test::Subprocess process_;
};

// The alps-only hooks: bench/alps_hook.cc as PrologSlurmctld and
// EpilogSlurmctld, against an emulated tds-8 of their own.
class AlpsOnly {
 public:
  explicit AlpsOnly(const std::string& bin) : dir_("slurm-jobs-alps", bin + "/slurm-tests") {
    ::chmod(dir_.path().c_str(), 0755);
    basil_test::run({bin + "/emulator/basil-emulator", "init", "--preset", "tds-8", "--state", dir_.path() + "/emu"});
    place_program(bin + "/bench/alps_hook", program());
    basil_test::write_file(program() + ".args",
                           bin + "/emulator/basil-emulator\n--state\n" + dir_.path() + "/emu\n");
  }
  std::string hook_lines() const {
    return "PrologSlurmctld=" + program() + "\nEpilogSlurmctld=" + program() + "\n";
  }
  // The hooks' failures, a line each (alps_hook.cc).
  std::string errors() const { return basil_test::read_file(program() + ".errors"); }
  // Reservations a prolog made that no epilog released (their files).
  std::size_t held() const {
    std::size_t n = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir_.path(), ec))
      if (e.path().filename().string().starts_with("alps-hook.res.")) ++n;
    return n;
  }

 private:
  std::string program() const { return dir_.path() + "/alps-hook"; }
  basil_test::TempDir dir_;
};

}  // namespace basil::bench
