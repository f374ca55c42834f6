// A basild for the benchmarks of the external-login paths: its own
// directory (config, state database, control socket, log), an ssh conduit
// in `mode` ("ssh-exec" or "ssh-gateway") to the fixture's sshd with
// `emulator --state STATE` as the main system's apbasil, polling hourly so
// that its own polls stay out of the measurements. Its basild.conf also
// serves apbasil_proxy --config. Stopped (SIGTERM, reaped) and its
// directory removed with the object.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/basild/conduit/sshd_fixture.h"
#include "basild/control_client/client.h"

namespace basil::bench {

struct BenchBasild {
  pid_t pid = -1;
  std::string dir, config;
  BenchBasild() = default;
  BenchBasild(const BenchBasild&) = delete;
  BenchBasild& operator=(const BenchBasild&) = delete;
  ~BenchBasild() {
    if (pid > 0) {
      ::kill(pid, SIGTERM);
      int st = 0;
      ::waitpid(pid, &st, 0);
    }
    if (!dir.empty()) basild::testing::shell("rm -rf " + dir);
  }
};

// Starts `bin`/basild/basild and waits (up to a minute) until its conduit
// is up and it holds an inventory; false, with basild's log on stderr, if
// it does not come up.
inline bool start_basild(BenchBasild& b, const basild::testing::TestSshd& sshd, const std::string& mode,
                         const std::string& emulator, const std::string& state, const std::string& bin) {
  using namespace std::chrono_literals;
  b.dir = basild::testing::sshd_temp_dir("cbench");
  b.config = b.dir + "/basild.conf";
  std::ofstream(b.config) << "[apbasil]\ntimeout = \"60s\"\n"
                          << basild::testing::conduit_conf(sshd, mode, emulator, state, bin)
                          << "[state]\ndatabase = \"" << b.dir << "/state.db\"\n"
                          << "[control]\nsocket = \"" << b.dir << "/control.sock\"\n"
                          << "[log]\ndirectory = \"" << b.dir << "\"\n"
                          << "[poll]\ninterval = \"1h\"\ninventory_max_age = \"1h\"\norphan_check_interval = \"1h\"\n";
  b.pid = ::fork();
  if (b.pid == 0) {
    FILE* f = std::freopen((b.dir + "/basild.log").c_str(), "w", stderr);
    (void)f;
    const std::string exe = bin + "/basild/basild";
    ::execl(exe.c_str(), exe.c_str(), "--config", b.config.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int i = 0; i < 600; ++i) {
    basild::control::Client c(b.dir + "/control.sock");
    auto r = c.request("GET", "/v1/health", "", "", 2s);
    if (r.ok()) {
      auto h = nlohmann::json::parse(r.body, nullptr, false);
      if (h.is_object() && h["conduit"].value("state", "") == "up" && h["inventory_age_s"].is_number()) return true;
    }
    std::this_thread::sleep_for(100ms);
  }
  std::fprintf(stderr, "basild (%s) did not come up:\n%s\n", mode.c_str(),
               basild::testing::read_file(b.dir + "/basild.log").c_str());
  return false;
}

}  // namespace basil::bench
