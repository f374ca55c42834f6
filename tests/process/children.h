// Helpers of the process library's tests.
#pragma once

#include <sys/types.h>

#include <string>

#include "process/spawn.h"
#include "tests/support/proc.h"

namespace basil::process::testing {

// A shell script as a program (set-up only: the library never runs a shell).
inline Program sh(const std::string& script) { return Program{{"/bin/sh", "-c", script}}; }

// Ended, whoever reaped it (a zombie of init's counts).
inline bool gone(pid_t pid) {
  const char state = basil_test::process_state(pid);
  return state == 0 || state == 'Z';
}

}  // namespace basil::process::testing
