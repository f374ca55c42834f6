// How an application ended, as aprun reports it: its exit status and the
// line it prints on standard error. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace emu::apsched {

struct Outcome {
  int status = 0;    // aprun's exit status
  std::string line;  // "" when every PE exited 0
};

// From the PEs' wait statuses, in PE order: 128 + the signal of the first
// PE a signal ended, else the first non-zero exit code, else 0; the line
// names the distinct exit codes ("Application 100001 exit codes: 1 3") and
// the distinct signals ("Application 100001 exit signals: Killed"), as
// Cray's aprun prints them.
Outcome outcome(std::uint64_t application_id, const std::vector<int>& wait_statuses);

}  // namespace emu::apsched
