// The transport the configuration asks for ([conduit] mode): the local
// apbasil, or the ssh conduit in exec or gateway mode. The service talks to
// it through the Transport port and reads its state for health and metrics.
#pragma once

#include "basild/asio/asio.h"
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "basild/conduit/ssh_transport.h"
#include "basild/core/metrics_text.h"
#include "basild/core/transport.h"
#include "basild/config/config.h"

namespace basild {

class Conduit {
 public:
  virtual ~Conduit() = default;
  virtual Transport& get() = 0;
  virtual const Transport& get() const = 0;
  virtual void shutdown() = 0;
  // {"mode": "local"} or the ssh conduit's state, counters and last error.
  virtual nlohmann::json status_json() const = 0;
  // Its Prometheus families (basild_conduit_*); none for the local transport.
  virtual void write_metrics(MetricsText& out) const = 0;
  // Runs apkill -`signal` `apid` where ALPS is, if this conduit does: the
  // ssh conduit runs [conduit] remote_apkill on the main system and returns
  // true (`done` is then called once, on the loop). The local conduit
  // returns false without calling `done`: the daemon runs [reconcile]
  // apkill itself.
  virtual bool async_apkill(std::uint64_t apid, int signal, std::chrono::milliseconds timeout,
                            Transport::Handler done) = 0;

  std::string_view name() const { return get().name(); }
  std::size_t running() const { return get().running(); }
  std::size_t queued() const { return get().queued(); }
};

// `on_link` hears the ssh link's drops and returns (none for the local one).
std::unique_ptr<Conduit> make_conduit(boost::asio::io_context& io, const Config& config,
                                      std::function<void(const conduit::LinkEvent&)> on_link = {});

}  // namespace basild
