// The command line of apkill, as a scheduler runs it (Slurm: `apkill -9
// 230893`): an optional signal, `-N` or `-NAME` (`-KILL`, `-SIGKILL`,
// default TERM as with kill), then one or more aprun application ids; and
// `--socket PATH` for basild's control socket. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "basil_proto/status.h"

namespace apbasil_proxy {

struct ApkillOrder {
  int signal = 15;                    // SIGTERM unless the command line says
  std::vector<std::uint64_t> apids;   // at least one
  std::optional<std::string> socket;  // --socket PATH
};

// `args` without argv[0]. A signal outside 1..64, an unknown signal name, an
// apid that is not a decimal number or no apid at all is an error naming it.
basil::Result<ApkillOrder> parse_apkill_args(const std::vector<std::string>& args);

}  // namespace apbasil_proxy
