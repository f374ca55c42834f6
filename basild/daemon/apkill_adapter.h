// apkill where ALPS is: through the ssh conduit on the main system
// ([conduit] remote_apkill), or locally, one process per call whose argv is
// [reconcile] apkill and its args, then "-SIGNAL APID". Either way nothing
// from ALPS but a number reaches it.
#pragma once

#include <map>
#include <memory>

#include "basild/core/apkill_port.h"
#include "basild/asio/asio.h"
#include "basild/transport/conduit.h"
#include "basild/config/config.h"
#include "basild/io/local_transport.h"

namespace basild {

// [reconcile] apkill and its args: the local apkill's argv before "-SIGNAL APID".
std::vector<std::string> local_apkill_argv(const ReconcileConfig& c);

class ApkillAdapter final : public ApkillPort, public std::enable_shared_from_this<ApkillAdapter> {
 public:
  ApkillAdapter(boost::asio::io_context& io, Conduit& conduit, std::vector<std::string> argv,
                std::chrono::milliseconds timeout);
  void apkill(std::uint64_t apid, int signal, Done done) override;
  // On reload: the local apkill may change ([apbasil] timeout needs a restart).
  void set_local_argv(std::vector<std::string> argv);
  void shutdown();  // kills local apkill processes still running

 private:
  boost::asio::io_context& io_;
  Conduit& conduit_;
  std::vector<std::string> argv_;  // the local apkill and its args
  std::chrono::milliseconds timeout_;
  std::map<std::uint64_t, std::unique_ptr<LocalTransport>> runners_;
  std::uint64_t next_ = 0;
};

}  // namespace basild
