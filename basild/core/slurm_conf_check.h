// `basilctl slurm-conf --check FILE`: the node definitions of an existing
// slurm.conf, read as slurmctld reads them, compared with what ALPS says,
// every difference named (Slurm's old ALPS plugin stopped the controller
// on a mismatch without a list). Pure: the text in, the include files
// through a loader the caller gives.
//
// Read from slurm.conf: lines whose first key is NodeName (any case, as
// every key); NodeName=DEFAULT lines set the defaults of the lines after
// them; NodeName takes a host list. '#' starts a comment ("\#" is a '#');
// a line ending in '\' goes on on the next; a value may be in double
// quotes; "Include FILE" lines are read in place (%c in FILE: the
// ClusterName set before). Every other line is passed over. Keys compared: CPUs (or Procs), Boards, Sockets,
// SocketsPerBoard, CoresPerSocket, ThreadsPerCore, RealMemory, Gres (its
// gpu count), Features (or Feature); a key not given has the value
// slurmctld gives it: ThreadsPerCore, CoresPerSocket and Boards 1, Sockets
// from CPUs / (CoresPerSocket x ThreadsPerCore) when CPUs is given else 1
// (Boards x SocketsPerBoard with SocketsPerBoard, Boards x Sockets with
// Boards), CPUs the product of the others, RealMemory 1, no GPU, no feature.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "basil_proto/status.h"
#include "basild/core/slurm_conf.h"
#include "basild/core/slurm_names.h"

namespace basild {

// A value and where it was set ("slurm.conf:12").
template <typename T>
struct ConfSetting {
  T value{};
  std::string where;
};

// One node as slurm.conf defines it: the keys given on its line or on the
// NodeName=DEFAULT lines before it.
struct ConfNode {
  std::string name;
  std::string where;  // its NodeName line
  std::optional<ConfSetting<std::uint32_t>> cpus, boards, sockets, sockets_per_board, cores_per_socket,
      threads_per_core, gpus;
  std::optional<ConfSetting<std::uint64_t>> real_memory;
  std::optional<ConfSetting<std::vector<std::string>>> features;  // sorted, no duplicates
};

struct ConfLimits {
  std::size_t max_line = 1 << 20;       // characters of a line, continuations joined
  std::size_t max_nodes = 1'000'000;    // node names in the whole file
  int max_include_depth = 8;
};

// An included file: its name (in messages, and the `from` of the includes
// it holds) and its text.
struct IncludedFile {
  std::string name;
  std::string text;
};
// The file an Include names: (its path, %c replaced; the including file's
// name). slurmctld looks for a relative path in slurm.conf's directory.
using IncludeLoader = std::function<basil::Result<IncludedFile>(const std::string& path, const std::string& from)>;

// Every node definition, in file order (a name defined twice is there
// twice). Errors are located ("slurm.conf:12: ..."): a line past the
// limit, an unclosed quote, a word without '=' on a NodeName line, a bad
// host list, a number that is not one, too many names, includes nested too
// deep, an include the loader cannot give.
basil::Result<std::vector<ConfNode>> parse_slurm_conf_nodes(std::string_view text, const std::string& file,
                                                            const IncludeLoader& include = nullptr,
                                                            const ConfLimits& limits = {});

struct ConfComparison {
  // One line each, the nodes that differ alike in one host list: a node of
  // ALPS not in slurm.conf, a node of slurm.conf that ALPS does not have (or
  // leaves out, with why), a node defined twice, and each field that
  // differs with both values and where slurm.conf's comes from. Empty when
  // they agree.
  std::vector<std::string> differences;
  // Nodes of slurm.conf that ALPS lists as BATCH without processors (a DOWN
  // node on some releases): neither agreeing nor differing.
  std::vector<std::string> not_compared;
};

ConfComparison compare_slurm_conf(const std::vector<ConfNode>& conf, const SlurmNodes& alps,
                                  const NodeNameRule& rule);

}  // namespace basild
