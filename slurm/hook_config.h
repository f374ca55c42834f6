// basil-slurm's configuration (basil-slurm(8), CONFIGURATION): a struct with
// the documented defaults and its strict parser from TOML text. Unknown
// sections and keys, wrong types, relative paths and durations out of range
// are errors naming the key and its line; all are reported, not only the
// first. Durations as in basild.conf(5): seconds as an integer, or "500ms",
// "30s", "5m", "1h".
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "basil_proto/status.h"
#include "basild/core/slurm_names.h"

namespace basild::slurm {

// Where basil-slurm looks when --config is not given (a missing file there
// means every default), for a program started as `argv0` (".../NAME"):
// NAME.conf beside it when argv0 names a folder and that file exists, else
// /etc/basild/NAME.conf. NAME is argv0's last component ("basil-slurm" when
// argv0 is empty). A site with two sets of hooks on one host (two clusters,
// or two controllers' basilds) links basil-slurm as another name and writes
// that name's file. Pure: `exists` says whether a file is there.
std::string config_path_for(std::string_view argv0, const std::function<bool(const std::string&)>& exists);

// Where a job's reservation is CONFIRMed (basil-slurm(8), CONFIRM AND
// APRUN). kNode: a batch job's on the node where its script starts, by the
// basil_reservation SPANK plugin with the batch step's container; the
// prolog CONFIRMs only an interactive allocation's (salloc, srun), with
// its session id (AllocSid). kController: the prolog CONFIRMs every job's
// with the job id as pagg_id (a site whose ALPS checks no container).
// basil-slurm.conf: confirm = "node" | "controller" (true and false, the
// older spelling, are "controller" and "node").
enum class ConfirmAt : std::uint8_t { kNode, kController };

struct HookConfig {
  // [basild]
  std::string socket = "/run/basild/control.sock";    // basild's control socket
  std::chrono::milliseconds basild_timeout = std::chrono::seconds(120);  // per call (RESERVE waits for ALPS)
  ConfirmAt confirm = ConfirmAt::kNode;  // who CONFIRMs a batch job's reservation
  // How long the prolog waits for a basild it cannot reach (not running,
  // restarting), or that cannot reach ALPS (outage()), before it gives the
  // job back to Slurm; 0: not at all.
  std::chrono::milliseconds outage_wait = std::chrono::minutes(10);
  // [slurm]
  // Job records through this scontrol (absolute: Slurm gives its hooks no
  // PATH); unset: libslurm's calls, in a child process each.
  std::optional<std::string> scontrol;
  std::optional<std::string> slurm_conf;              // SLURM_CONF for both; unset: Slurm's default
  std::chrono::milliseconds slurm_timeout = std::chrono::seconds(20);  // per call to Slurm
  NodeNameRule node_name_rule;                        // "nid%05d"
  // [log]
  std::optional<std::string> log_file;                // appended to, one line per event; unset: none
  bool syslog = true;                                 // also to syslog (LOG_DAEMON, ident basil-slurm)
};

// The configuration in `text`; errors are "ORIGIN:LINE:COL: KEY: message",
// one a line.
basil::Result<HookConfig> parse_hook_config(std::string_view text, std::string_view origin);

}  // namespace basild::slurm
