// apkill where ALPS is: through the ssh conduit on the main system
// ([conduit] remote_apkill), or locally, one process per call whose argv is
// [reconcile] apkill and its args, then "-SIGNAL APID". Either way nothing
// from ALPS but a number reaches it.
#pragma once

#include <memory>

#include "basild/core/apkill_port.h"
#include "basild/asio/asio.h"
#include "basild/transport/conduit.h"
#include "basild/config/config.h"
#include "basild/io/command_calls.h"

namespace basild {

// [reconcile] apkill and its args: the local apkill's argv before "-SIGNAL APID".
std::vector<std::string> local_apkill_argv(const ReconcileConfig& c);

class ApkillAdapter final : public ApkillPort {
 public:
  ApkillAdapter(boost::asio::io_context& io, Conduit& conduit, std::vector<std::string> argv,
                std::chrono::milliseconds timeout);
  void apkill(std::uint64_t apid, int signal, Done done) override;
  // On reload: the local apkill may change ([apbasil] timeout needs a restart).
  void set_local_argv(std::vector<std::string> argv);
  void shutdown();  // kills local apkill processes still running

 private:
  Conduit& conduit_;
  std::vector<std::string> argv_;  // the local apkill and its args
  std::chrono::milliseconds timeout_;
  CommandCalls calls_;
};

}  // namespace basild
