// Runs a program as the emulator's one-shot commands need it (the mysql
// client of `sdb`): an argv (never a shell, argv[0] looked up in PATH), the
// input written on its standard input which is then closed, standard output
// and error collected, and a deadline after which its process group is
// killed. Blocking, with poll(); SIGPIPE is ignored while it runs, so a
// program that exits before reading its input does not kill the emulator.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "basil_proto/status.h"

namespace emu {

struct ProgramRun {
  int exit_code = -1;      // the exit status, or 128 + signal when killed
  bool timed_out = false;  // killed at the deadline
  std::string out;         // standard output, up to `max_captured` bytes
  std::string err;         // standard error, likewise
  bool out_truncated = false;  // standard output past `max_captured` was dropped
};

// Fails (kTransport) only when the program cannot be started. Output past
// `max_captured` bytes (per stream) is read and dropped.
basil::Result<ProgramRun> run_program(const std::vector<std::string>& argv, std::string_view input,
                                      std::chrono::milliseconds timeout, std::size_t max_captured = 64 * 1024);

}  // namespace emu
