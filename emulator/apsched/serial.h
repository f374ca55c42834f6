// `basil-emulator system --apsched serial`: apsched handling one change at
// a time, as ALPS's apsched does. RESERVE, CONFIRM, RELEASE and SWITCH
// (each with its injected latency, the CSCS model's included) and aprun's
// placement by the daemon each hold the state directory's apsched lock
// (STATE/apsched.lock, flock) from before their change until their
// answer's latency has passed; queries (ENGINE, INVENTORY, SUMMARY,
// STATUS) never wait for it. `--apsched parallel` (the default) takes no
// lock: only SQLite's write lock orders the changes, and latencies overlap.
#pragma once

#include <chrono>
#include <string>

#include "basil_proto/model.h"

namespace emu::apsched {

// Each section, when it ends, appends a line to STATE/apsched-serial.log:
// "KIND HELD_MS WAITED_MS" (KIND: RESERVE, CONFIRM, RELEASE, SWITCH or
// APRUN; how long it held the lock, and waited for it before): apsched's
// busy time, from which a benchmark takes ALPS's bound on throughput.
inline constexpr const char* kSerialLog = "apsched-serial.log";

// A change serial apsched handles one at a time.
bool serialised(const basil::Request& request);

// Holds the apsched lock of a state directory while it lives, waiting for
// it first (a process that dies lets it go). A lock file that cannot be
// opened holds nothing: the calls then overlap as in parallel mode.
class SerialSection {
 public:
  SerialSection(const std::string& state_dir, std::string kind);
  ~SerialSection();
  SerialSection(const SerialSection&) = delete;
  SerialSection& operator=(const SerialSection&) = delete;

 private:
  int fd_ = -1;
  std::string log_;
  std::string kind_;
  std::chrono::steady_clock::time_point asked_, held_;
};

}  // namespace emu::apsched
