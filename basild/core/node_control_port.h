// The node-control port: Slurm's view of its nodes, and the two changes
// basild makes to them (drain with a reason, resume). The daemon's adapter
// runs Slurm's scontrol (basild/io/scontrol.h); tests keep an in-memory
// Slurm. `done` is called exactly once, on the io_context, never inside the
// call itself.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "basil_proto/status.h"

namespace basild {

// One node as Slurm shows it.
struct SlurmNode {
  std::string name;
  std::string state;   // as Slurm prints it: "IDLE+DRAIN", "DOWN+NOT_RESPONDING", ...
  bool drain = false;  // the DRAIN flag: draining or drained
  bool down = false;   // the base state is DOWN
  bool fail = false;   // the FAIL flag (an admin's "failing": drained too)
  std::string reason;  // without Slurm's "[user@time]" stamp; "" when none
  bool operator==(const SlurmNode&) const = default;
};

class NodeControlPort {
 public:
  using ListDone = std::function<void(basil::Result<std::vector<SlurmNode>>)>;
  using Done = std::function<void(basil::Status)>;
  virtual ~NodeControlPort() = default;

  // Every node Slurm knows, or only the one named.
  virtual void list(std::optional<std::string> name, ListDone done) = 0;
  // Drains the node with `reason` (one argument, whatever it holds).
  virtual void drain(const std::string& name, const std::string& reason, Done done) = 0;
  // Returns a drained node to service.
  virtual void resume(const std::string& name, Done done) = 0;
};

}  // namespace basild
