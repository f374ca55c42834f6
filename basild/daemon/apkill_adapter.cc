#include "basild/daemon/apkill_adapter.h"

namespace basild {

std::vector<std::string> local_apkill_argv(const ReconcileConfig& c) {
  std::vector<std::string> argv{c.apkill};
  argv.insert(argv.end(), c.apkill_args.begin(), c.apkill_args.end());
  return argv;
}

ApkillAdapter::ApkillAdapter(boost::asio::io_context& io, Conduit& conduit, std::vector<std::string> argv,
                             std::chrono::milliseconds timeout)
    : conduit_(conduit), argv_(std::move(argv)), timeout_(timeout), calls_(io) {}

void ApkillAdapter::apkill(std::uint64_t apid, int signal, Done done) {
  if (conduit_.async_apkill(apid, signal, timeout_, done)) return;
  LocalTransportOptions ko;
  ko.argv = argv_;
  ko.argv.push_back("-" + std::to_string(signal));
  ko.argv.push_back(std::to_string(apid));
  ko.output = LocalOutput::kText;
  ko.label = "apkill";
  calls_.run(std::move(ko), timeout_, std::move(done));
}

void ApkillAdapter::set_local_argv(std::vector<std::string> argv) { argv_ = std::move(argv); }

void ApkillAdapter::shutdown() { calls_.shutdown(); }

}  // namespace basild
