// The daemon's service: owns the store, the apbasil transport, the typed
// client, the XML log, the timings and the control socket, and runs the
// ALPS loop (negotiate, then poll INVENTORY). main.cc owns the io_context,
// the signals and the config file; this class owns everything else.
#pragma once

#include <functional>
#include <memory>

#include "basil_proto/status.h"
#include "basild/config/config.h"
#include "basild/daemon/log.h"

namespace boost::asio {
class io_context;
}

namespace basild {

// What the command line says besides the configuration.
struct ServiceFlags {
  bool accept_empty_state = false;  // --accept-empty-state: an empty state.db starts as a new one
  std::string config_path;          // published for apbasil_proxy (control_client/published.h)
  std::string version;              // basild's, for basild_build_info
};

class Service {
 public:
  Service(boost::asio::io_context& io, Config config, Logger& log, ServiceFlags flags = {});
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Opens the state database (refusing when another basild holds it), the
  // XML log, the transport and the control socket, then starts the ALPS
  // loop. An error here means the daemon cannot run.
  basil::Status start();

  // SIGTERM/SIGINT: stops accepting, lets in-flight calls finish or time
  // out, flushes state, then calls `done` on the io_context.
  void stop(std::function<void()> done);

  // SIGHUP: applies what can change while running (log level, XML log,
  // polling, call timeout, reconcile settings); names the keys that need a
  // restart.
  void reload(const Config& next);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace basild
