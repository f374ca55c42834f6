// basild: the daemon between a batch scheduler and Cray ALPS.
//   basild [--config FILE] [--check-config] [--accept-empty-state] | --version
#include <signal.h>

// GCC 12 reports -Wnull-dereference inside libstdc++'s std::string when it
// inlines Boost.Program_options' error paths at -O2 (a false positive in
// system headers). This file is thin glue; the warning stays on elsewhere.
#pragma GCC diagnostic ignored "-Wnull-dereference"

#include <boost/program_options.hpp>
#include <cstdlib>
#include <fstream>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "basild/asio/asio.h"
#include "basild/config/config.h"
#include "basild/daemon/host_check.h"
#include "basild/daemon/log.h"
#include "basild/daemon/service.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <boost/asio/signal_set.hpp>
#pragma GCC diagnostic pop

#ifdef BASILD_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace po = boost::program_options;

namespace {

void notify(const char* state) {
#ifdef BASILD_HAVE_SYSTEMD
  sd_notify(0, state);
#else
  (void)state;
#endif
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path = "/etc/basild/basild.conf";
  po::options_description desc("basild options");
  // One option per line: tests/docs/pages.sh reads them from here for basild(8).
  // clang-format off
  desc.add_options()
      ("help,h", "show this help")
      ("version", "print the version (debian/changelog's) and exit")
      ("config,c", po::value<std::string>(&config_path), "configuration file (default /etc/basild/basild.conf)")
      ("check-config", "check the configuration and this host (programs, files, folders, the control socket), print it with defaults filled in, and exit")
      ("accept-empty-state", "start with an empty state database when the file exists but is empty (0 bytes)");
  // clang-format on
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "basild: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help") != 0) {
    std::cout << desc;
    return 0;
  }
  if (vm.count("version") != 0) {
    std::cout << "basild " << BASIL_VERSION << "\n";
    return 0;
  }
  std::string text;
  if (!read_file(config_path, text)) {
    std::cerr << "basild: cannot read configuration " << config_path << "\n";
    return 1;
  }
  if (vm.count("check-config") != 0) {
    // Names are resolved as at start, and the host is checked for the user
    // running this (daemon/host_check.h).
    auto check = basild::check_config_on_host(text, config_path, basild::posix_host_view());
    std::cout << check.report;
    return check.ok ? 0 : 1;
  }
  auto parsed = basild::parse_config(text, config_path);
  if (!parsed) {
    std::cerr << "basild: " << parsed.status().message() << "\n";
    return 1;
  }
  basild::Logger log(parsed->log.level);
  for (const auto& w : basild::config_warnings(*parsed)) log.warning("B0100", w);

  ::signal(SIGPIPE, SIG_IGN);
  boost::asio::io_context io;
  basild::ServiceFlags flags;
  flags.accept_empty_state = vm.count("accept-empty-state") != 0;
  flags.version = BASIL_VERSION;
  std::error_code absolute_failed;  // the path as given then
  flags.config_path = std::filesystem::absolute(config_path, absolute_failed).string();
  basild::Service service(io, *parsed, log, flags);
  if (auto s = service.start(); !s) {
    log.error("B0001", "cannot start: " + s.to_string());
    return 1;
  }
  log.notice("B0002", "basild started (config " + config_path + ")");
  notify("READY=1");

  boost::asio::signal_set signals(io, SIGTERM, SIGINT, SIGHUP);
  std::function<void(const boost::system::error_code&, int)> on_signal;
  on_signal = [&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    if (sig == SIGHUP) {
      notify("RELOADING=1");
      std::string next_text;
      auto next = read_file(config_path, next_text) ? basild::parse_config(next_text, config_path)
                                                    : basil::Result<basild::Config>(basil::Status(
                                                          basil::Code::kInvalidValue, "cannot read " + config_path));
      if (next) {
        service.reload(*next);
      } else {
        log.error("B0003", "reload refused, keeping the running configuration: " + next.status().message());
      }
      notify("READY=1");
      signals.async_wait(on_signal);
      return;
    }
    log.notice("B0004", std::string("stopping on ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT"));
    notify("STOPPING=1");
    signals.cancel();
    service.stop([&io] { io.stop(); });
  };
  signals.async_wait(on_signal);
  io.run();
  return 0;
}
