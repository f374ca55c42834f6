// A basild for the benchmarks of the external-login paths: its own
// directory (config, state database, control socket, log), an ssh conduit
// in `mode` ("ssh-exec" or "ssh-gateway") to the fixture's sshd with
// `emulator --state STATE` as the main system's apbasil, polling hourly so
// that its own polls stay out of the measurements. proxy_argv() is
// apbasil_proxy told its socket (and basild.conf, for the fallback).
// Stopped (SIGTERM, reaped) and its directory removed with the object.
#pragma once

#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "basild/control_client/client.h"
#include "tests/support/files.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace basil::bench {

struct BenchBasild {
  basil_test::TempDir dir{"basild-cbench"};
  std::string config = dir.path() + "/basild.conf";
  std::string socket = dir.path() + "/control.sock";
  basil_test::Subprocess process;
  std::vector<std::string> proxy_argv(const std::string& bin) const {
    return {bin + "/apbasil_proxy/apbasil_proxy", "--socket", socket, "--config", config};
  }
  BenchBasild() = default;
  ~BenchBasild() {
    process.signal(SIGTERM);
    process.wait();
  }
};

// Starts `bin`/basild/basild and waits (up to a minute) until its conduit
// is up and it holds an inventory; false, with basild's log on stderr, if
// it does not come up.
inline bool start_basild(BenchBasild& b, const basil_test::TestSshd& sshd, const std::string& mode,
                         const std::string& emulator, const std::string& state, const std::string& bin) {
  using namespace std::chrono_literals;
  const std::string& dir = b.dir.path();
  std::ofstream(b.config) << "[apbasil]\ntimeout = \"60s\"\n"
                          << basil_test::conduit_conf(sshd, mode, emulator, state, bin)
                          << "[state]\ndatabase = \"" << dir << "/state.db\"\n"
                          << "[control]\nsocket = \"" << b.socket << "\"\n"
                          << "[log]\ndirectory = \"" << dir << "\"\n"
                          << "[poll]\ninterval = \"1h\"\ninventory_max_age = \"1h\"\norphan_check_interval = \"1h\"\n";
  b.process = basil_test::Subprocess({bin + "/basild/basild", "--config", b.config},
                                    {.err = basil_test::Redirect::file(dir + "/basild.log")});
  auto conduit_up = [&] {
    basild::control::Client c(dir + "/control.sock");
    auto r = c.request("GET", "/v1/health", "", "", 2s);
    if (!r.ok()) return false;
    auto h = nlohmann::json::parse(r.body, nullptr, false);
    return h.is_object() && h["conduit"].value("state", "") == "up" && h["inventory_age_s"].is_number();
  };
  const bool up = b.process.started() && basil_test::wait_until(conduit_up, 60s);
  if (!up)
    std::fprintf(stderr, "basild (%s) did not come up: %s\n%s\n", mode.c_str(), b.process.error().c_str(),
                 basil_test::read_file(dir + "/basild.log").c_str());
  return up;
}

}  // namespace basil::bench
