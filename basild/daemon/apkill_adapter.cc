#include "basild/daemon/apkill_adapter.h"

namespace basild {

std::vector<std::string> local_apkill_argv(const ReconcileConfig& c) {
  std::vector<std::string> argv{c.apkill};
  argv.insert(argv.end(), c.apkill_args.begin(), c.apkill_args.end());
  return argv;
}

ApkillAdapter::ApkillAdapter(boost::asio::io_context& io, Conduit& conduit, std::vector<std::string> argv,
                             std::chrono::milliseconds timeout)
    : io_(io), conduit_(conduit), argv_(std::move(argv)), timeout_(timeout) {}

void ApkillAdapter::apkill(std::uint64_t apid, int signal, Done done) {
  if (conduit_.async_apkill(apid, signal, timeout_, done)) return;
  LocalTransportOptions ko;
  ko.argv = argv_;
  ko.argv.push_back("-" + std::to_string(signal));
  ko.argv.push_back(std::to_string(apid));
  ko.output = LocalOutput::kText;
  ko.label = "apkill";
  const std::uint64_t key = next_++;
  auto& runner = runners_[key] = std::make_unique<LocalTransport>(io_, ko);
  auto self = shared_from_this();
  runner->async_call({}, timeout_, [self, key, done = std::move(done)](CallOutcome o) {
    done(std::move(o));
    // Destroyed after its handler has returned, not inside it.
    boost::asio::post(self->io_, [self, key] { self->runners_.erase(key); });
  });
}

void ApkillAdapter::set_local_argv(std::vector<std::string> argv) { argv_ = std::move(argv); }

void ApkillAdapter::shutdown() {
  for (auto& [key, runner] : runners_) runner->shutdown();
}

}  // namespace basild
