// Node state from ALPS to Slurm: a pure planner that maps (ALPS's nodes from
// the last full INVENTORY, Slurm's nodes, the settings) to drains and
// resumes; the daemon carries them out (daemon/node_sync_runner.h).
//
// A node is usable when ALPS has it UP and BATCH. Slurm's node names map to
// NIDs by the node name rule (slurm_names.h); a Slurm node whose name the
// rule does not make is none of basild's business and is not looked at.
// basild marks its own drains by their reason, "<prefix> ALPS has nid N
// state S[, role R]" (drain_reason.h holds the grammar): a drain is
// basild's only when its whole reason is one basild writes for that node's
// NID, nothing added (an admin who drains with basild's words and a note
// of their own keeps the node).
//
// - ALPS has a node not usable, Slurm has it neither drained, failed nor
//   down: drain it with the reason naming ALPS's state and role.
// - ... Slurm has it drained by basild with another reason (ALPS's state
//   changed, DOWN to SUSPECT): drain it again with the new reason.
// - ... Slurm has it drained, failed or down for another reason (an admin,
//   Slurm itself): left as it is, the other reason kept (kHeldByOther).
// - ALPS has a node usable but holds it for a reservation that no Slurm
//   job owns (AlpsHold: an interactive session, an orphan in its grace
//   period, a reservation being released while its applications end,
//   another party's): drained alike, with a reason naming the reservation
//   and its user; the lowest reservation id when several hold it. A node
//   not usable is drained for its state first. While who owns the
//   reservations is not known (`holds` null: basild has not yet judged
//   them against a job table that answered), a node basild drained for a
//   hold stays drained.
// - ALPS has a node usable and holds it for no one else, Slurm has it
//   drained by basild: resume it; unless Slurm has it DOWN as well
//   (Slurm's own doing since; resumed when that clears: kDownInSlurm) or
//   failed.
// - A node drained for any other reason is never resumed.
// - A name Slurm lists twice is not acted on (kListedTwice): a comment with
//   a newline can fake a line of scontrol's listing (scontrol_nodes.h).
// - A node ALPS does not list is not acted on (kNotInAlps); a node ALPS has
//   not usable that Slurm does not know is reported (kUnknownToSlurm).
// - At most max_changes actions per plan: drains first (they keep jobs off
//   broken nodes), then resumes, each by NID; the rest wait (kBound) for the
//   next plan.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "basil_proto/model.h"
#include "basild/core/drain_reason.h"
#include "basild/core/node_control_port.h"
#include "basild/core/reconciler.h"
#include "basild/core/slurm_names.h"

namespace basild {

// The nodes of an INVENTORY.
std::vector<AlpsNodeView> alps_nodes(const basil::Inventory& inv);
// The nodes an INVENTORY's reservations whose ids are in `others` hold,
// by NID, each for the lowest such reservation id on it.
std::vector<AlpsHold> alps_holds(const basil::Inventory& inv, const std::set<std::uint64_t>& others);

inline constexpr std::string_view kDefaultReasonPrefix = "basild:";

struct NodeSyncSettings {
  NodeNameRule rule;  // nid%05d
  std::string reason_prefix{kDefaultReasonPrefix};
  std::uint32_t max_changes = 10;
};

// Why a job cannot have `wanted`: "nid 11 is held by ALPS for reservation
// 42 of user alice, batch id UNKNOWN", one clause per reservation of
// `alps` holding any of them, lowest id first, the first three and "and N
// more"; "" when none does. A RESERVE's refusal names the holders so.
std::string holders_of(const std::vector<AlpsReservation>& alps, const basil::NidList& wanted);

bool usable(const AlpsNodeView& n);
// "<prefix> ALPS has nid 12 state DOWN", "... nid 12 role INTERACTIVE",
// "... nid 12 state SUSPECT, role INTERACTIVE" (format_drain_reason).
std::string drain_reason(std::string_view prefix, const AlpsNodeView& n);
// The node's drain is basild's: drained, not failed, its whole reason one
// that basild writes for NID `nid` (parse_drain_reason).
bool drained_by_basild(const SlurmNode& n, std::uint32_t nid, std::string_view prefix);
// What a resume needs Slurm still to show just before it: drained by
// basild for NID `nid` and not down.
bool resumable(const SlurmNode& n, std::uint32_t nid, std::string_view prefix);

enum class NodeSkip : std::uint8_t {
  kBound,           // over max_changes: next time
  kHeldByOther,     // drained, failed or down in Slurm for another reason
  kDownInSlurm,     // drained by basild, usable in ALPS, but DOWN in Slurm
  kUnknownToSlurm,  // ALPS has it not usable; Slurm has no node of its name
  kNotInAlps,       // Slurm has it under the rule; ALPS does not list the NID
  kListedTwice,     // Slurm's listing holds the name twice
};
inline constexpr std::size_t kNodeSkips = 6;
std::string_view node_skip_name(NodeSkip s);

struct NodeSyncAction {
  enum class Kind : std::uint8_t { kDrain, kResume };
  Kind kind = Kind::kDrain;
  std::string name;          // Slurm's
  std::uint32_t nid = 0;
  std::string reason;        // kDrain: the reason given
  AlpsNodeView alps;         // what ALPS has
  std::string slurm_state;   // what Slurm had
  std::string slurm_reason;  // ... and its reason ("" when none)
};

struct NodeSyncSkipped {
  std::string name;  // Slurm's, or the rule's for kUnknownToSlurm
  std::uint32_t nid = 0;
  NodeSkip why = NodeSkip::kBound;
  std::string slurm_reason;  // kHeldByOther: the reason kept
};

struct NodeSyncPlan {
  std::vector<NodeSyncAction> actions;
  std::vector<NodeSyncSkipped> skipped;
  std::size_t drained_by_basild = 0;  // nodes Slurm shows drained by basild before the plan
};

NodeSyncPlan plan_node_sync(const std::vector<AlpsNodeView>& alps, const std::vector<SlurmNode>& slurm,
                            const NodeSyncSettings& settings, const std::vector<AlpsHold>* holds = nullptr);

std::string_view node_action_name(NodeSyncAction::Kind k);  // "drain", "resume"

}  // namespace basild
