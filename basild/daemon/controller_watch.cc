#include "basild/daemon/controller_watch.h"

#include <memory>
#include <optional>

#include "basild/daemon/replies.h"

namespace basild {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

// Before the first answer: a basild with a backup controller configured
// does not know yet, and waits as a standby.
RoleVerdict first_verdict(const std::string& host) {
  if (host.empty()) return controller_role(std::string(), host);
  return {ControllerRole::kUnknown, "", "Slurm not asked yet"};
}

}  // namespace

ControllerWatch::ControllerWatch(asio::io_context& io, std::string slurmctld_host, Logger& log,
                                 const ClockPort& clock, Ping ping)
    : io_(io),
      host_(std::move(slurmctld_host)),
      log_(log),
      clock_(clock),
      ping_(std::move(ping)),
      verdict_(first_verdict(host_)),
      since_(clock_.wall()) {}

void ControllerWatch::set_slurmctld_host(std::string host) {
  if (host == host_) return;
  host_ = std::move(host);
  take(first_verdict(host_));
}

Awaitable<void> ControllerWatch::check() {
  if (host_.empty() || !ping_) co_return;
  struct Wait {
    explicit Wait(asio::io_context& io) : done(io) {}
    asio::steady_timer done;
    std::optional<basil::Result<std::string>> out;
  };
  auto w = std::make_shared<Wait>(io_);
  w->done.expires_at(asio::steady_timer::time_point::max());
  ping_([w](basil::Result<std::string> r) {
    w->out.emplace(std::move(r));
    w->done.cancel();
  });
  if (!w->out) {
    boost::system::error_code ec;
    co_await w->done.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  take(controller_role(*w->out, host_));
}

void ControllerWatch::take(const RoleVerdict& v) {
  const bool changed = v.role != verdict_.role || v.in_charge != verdict_.in_charge;
  verdict_ = v;
  if (!changed) return;
  since_ = clock_.wall();
  switch (v.role) {
    case ControllerRole::kInCharge:
      log_.notice("B0440", "in charge for the cluster (" + v.reason +
                               "): orphans are released and Slurm's nodes synced here");
      break;
    case ControllerRole::kStandby:
      log_.notice("B0441", "standby (" + v.reason + "): the basild beside it releases orphans and syncs nodes");
      break;
    case ControllerRole::kUnknown:
      log_.warning("B0442", "cannot tell which slurmctld is in charge (" + v.reason +
                                "): no orphan is released and no node changed until it can");
      break;
  }
}

json ControllerWatch::health_json() const {
  return {{"role", controller_role_name(verdict_.role)},
          {"slurmctld_host", host_},
          {"in_charge", verdict_.in_charge.empty() ? json(nullptr) : json(verdict_.in_charge)},
          {"reason", verdict_.reason},
          {"since_ms", epoch_ms(since_)}};
}

void ControllerWatch::write_metrics(MetricsText& m) const {
  m.gauge("basild_in_charge", in_charge() ? 1 : 0,
          "1 while this basild releases orphans and syncs nodes (its slurmctld is in charge, or no backup)");
}

}  // namespace basild
