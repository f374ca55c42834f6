// `basil-emulator system --apsched serial`: apsched handling one change at
// a time, as ALPS's apsched does. RESERVE, CONFIRM, RELEASE and SWITCH
// (each with its injected latency, the CSCS model's included) and aprun's
// placement by the daemon each hold the state directory's apsched lock
// (STATE/apsched.lock, flock) from before their change until their
// answer's latency has passed; queries (ENGINE, INVENTORY, SUMMARY,
// STATUS) never wait for it. `--apsched parallel` (the default) takes no
// lock: only SQLite's write lock orders the changes, and latencies overlap.
#pragma once

#include <string>

#include "basil_proto/model.h"

namespace emu::apsched {

// A change serial apsched handles one at a time.
bool serialised(const basil::Request& request);

// Holds the apsched lock of a state directory while it lives, waiting for
// it first (a process that dies lets it go). A lock file that cannot be
// opened holds nothing: the calls then overlap as in parallel mode.
class SerialSection {
 public:
  explicit SerialSection(const std::string& state_dir);
  ~SerialSection();
  SerialSection(const SerialSection&) = delete;
  SerialSection& operator=(const SerialSection&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace emu::apsched
