// The apkill port: signal one aprun application where ALPS is. The daemon's
// adapter runs apkill through the ssh conduit on the main system or as a
// local program; tests record the calls. `done` is called exactly once, on
// the io_context, never inside apkill() itself.
#pragma once

#include <cstdint>
#include <functional>

#include "basild/core/transport.h"

namespace basild {

class ApkillPort {
 public:
  using Done = std::function<void(CallOutcome)>;
  virtual ~ApkillPort() = default;
  virtual void apkill(std::uint64_t apid, int signal, Done done) = 0;
};

}  // namespace basild
