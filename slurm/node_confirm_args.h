// The basil_reservation plugin's arguments in plugstack.conf (basil-slurm(8),
// CONFIRM AND APRUN): whether and how it CONFIRMs a batch job's reservation
// on the node where the script starts.
//
//   required basil_reservation.so [confirm=basild | confirm=apbasil:PATH]
//                                 [basil_slurm=PATH] [config=PATH]
//
// confirm=basild: through basild's control socket (basil-slurm.conf's
// [basild] socket; basild on this host). confirm=apbasil:PATH: through the
// node's own apbasil. Without confirm= the plugin confirms nothing (a site
// whose prolog confirms, confirm = "controller"). basil_slurm names the
// program that makes the call, config its configuration file. Pure, and
// without Slurm's headers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace basild::slurm {

enum class ConfirmVia : unsigned char { kNone, kBasild, kApbasil };

struct NodeConfirmSettings {
  ConfirmVia via = ConfirmVia::kNone;
  std::string apbasil;                // with kApbasil: an absolute path
  std::string basil_slurm;            // the program: an absolute path
  std::optional<std::string> config;  // its --config; unset: its built-in path
};

// The settings from the arguments, starting from `default_program`; an
// error names the argument that is wrong (unknown, a path that is not
// absolute, a second confirm=).
std::variant<NodeConfirmSettings, std::string> parse_node_confirm_args(const std::vector<std::string_view>& args,
                                                                       std::string default_program);

// basil-slurm's argument vector for the CONFIRM of `reservation_id` of job
// `job_id` with `pagg_id`.
std::vector<std::string> node_confirm_argv(const NodeConfirmSettings& s, std::string_view job_id,
                                           std::uint64_t reservation_id, std::uint64_t pagg_id);

}  // namespace basild::slurm
