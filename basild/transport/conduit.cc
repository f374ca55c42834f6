#include "basild/transport/conduit.h"

#include "basild/conduit/from_config.h"
#include "basild/io/local_transport.h"

namespace basild {

namespace {

class LocalConduit final : public Conduit {
 public:
  LocalConduit(boost::asio::io_context& io, const Config& c) : transport_(io, options(c)) {}
  Transport& get() override { return transport_; }
  const Transport& get() const override { return transport_; }
  void shutdown() override { transport_.shutdown(); }
  nlohmann::json status_json() const override { return {{"mode", "local"}}; }
  void write_metrics(MetricsText&) const override {}
  bool async_apkill(std::uint64_t, int, std::chrono::milliseconds, Transport::Handler) override { return false; }

 private:
  static LocalTransportOptions options(const Config& c) {
    LocalTransportOptions to;
    to.argv = {c.apbasil.path};
    to.argv.insert(to.argv.end(), c.apbasil.args.begin(), c.apbasil.args.end());
    to.max_concurrent = c.apbasil.max_concurrent;
    to.max_output_bytes = static_cast<std::size_t>(c.apbasil.max_output_bytes);
    return to;
  }
  LocalTransport transport_;
};

conduit::SshTransportOptions with_link_events(conduit::SshTransportOptions o,
                                              std::function<void(const conduit::LinkEvent&)> on_link) {
  o.on_link = std::move(on_link);
  return o;
}

class SshConduit final : public Conduit {
 public:
  SshConduit(boost::asio::io_context& io, const Config& c, std::function<void(const conduit::LinkEvent&)> on_link)
      : transport_(io, with_link_events(ssh_transport_options(c), std::move(on_link))) {}
  Transport& get() override { return transport_; }
  const Transport& get() const override { return transport_; }
  void shutdown() override { transport_.shutdown(); }
  bool async_apkill(std::uint64_t apid, int signal, std::chrono::milliseconds timeout,
                    Transport::Handler done) override {
    transport_.async_apkill(apid, signal, timeout, std::move(done));
    return true;
  }

  nlohmann::json status_json() const override {
    const auto s = transport_.status();
    nlohmann::json j = {{"mode", s.mode},
                        {"target", s.target},
                        {"host", s.host},
                        {"hosts", s.hosts},
                        {"failovers", s.failovers},
                        {"state", s.state},
                        {"connects", s.connects},
                        {"connect_failures", s.connect_failures},
                        {"drops", s.drops},
                        {"helper_starts", s.helper_starts},
                        {"retried_queries", s.retried_queries},
                        {"lost_calls", s.lost_calls},
                        {"helper_version", s.helper_version},
                        {"compression", s.compression},
                        {"cipher", s.cipher}};
    if (!s.last_error.empty()) j["last_error"] = s.last_error;
    if (s.since)
      j["since"] = std::chrono::duration_cast<std::chrono::seconds>(s.since->time_since_epoch()).count();
    return j;
  }

  void write_metrics(MetricsText& m) const override {
    const auto s = transport_.status();
    m.gauge("basild_conduit_up", s.state == "up" ? 1 : 0, "1 while the ssh session to the main system is up");
    m.counter("basild_conduit_connects_total", s.connects, "ssh sessions opened to the main system");
    m.counter("basild_conduit_connect_failures_total", s.connect_failures, "ssh sessions that could not be opened");
    m.counter("basild_conduit_drops_total", s.drops, "ssh sessions lost while up");
    m.counter("basild_conduit_failovers_total", s.failovers,
              "ssh sessions opened on another login node than the session before");
    m.family("basild_conduit_host", "gauge", "1 for the login node ([conduit] hosts) the ssh session is on");
    if (!s.host.empty()) m.sample("basild_conduit_host", Labels{{"host", s.host}}, std::uint64_t{1});
    m.counter("basild_conduit_helper_starts_total", s.helper_starts, "gateway helpers started on the main system");
    m.counter("basild_conduit_retried_queries_total", s.retried_queries,
              "QUERY calls sent again after their session was lost");
    m.counter("basild_conduit_lost_calls_total", s.lost_calls,
              "calls other than QUERY whose session was lost before they were answered");
  }

 private:
  conduit::SshTransport transport_;
};

}  // namespace

std::unique_ptr<Conduit> make_conduit(boost::asio::io_context& io, const Config& config,
                                      std::function<void(const conduit::LinkEvent&)> on_link) {
  if (config.conduit.mode == ConduitMode::kLocal) return std::make_unique<LocalConduit>(io, config);
  return std::make_unique<SshConduit>(io, config, std::move(on_link));
}

}  // namespace basild
