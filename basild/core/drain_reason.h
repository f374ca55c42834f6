// The reasons basild gives the Slurm nodes it drains, and the one grammar
// by which it knows them again: a drain is basild's exactly when its whole
// reason parses here. Pure: text in, values out. basild(8) (NODE STATE TO
// SLURM) and basild.conf(5) (reason_prefix) state the same grammar.
//
//   reason    = PREFIX " ALPS " clause
//   clause    = "has nid " NID condition                    (AlpsNodeView)
//             | "holds nid " NID " for reservation " RESID
//               " of user " USER ", no Slurm job"          (AlpsHold)
//   condition = " state " STATE
//             | " role " ROLE
//             | " state " STATE ", role " ROLE
//
// PREFIX is the site's [slurm] reason_prefix ("basild:"); NID is decimal
// with no leading zero; STATE is an ALPS node state other than UP, ROLE a
// role other than BATCH, as ALPS names them (DOWN, SUSPECT, INTERACTIVE,
// UNKNOWN, ...). Nothing comes before PREFIX and nothing after the clause:
// "basild: ALPS has nid 11 state DOWN -- admin: keep drained" is not
// basild's, nor is a reason of another form, another prefix, or a number or
// name written otherwise than basild writes it (parse(text) succeeds only
// when format(parse(text)) == text).
//
// RESID is decimal with no leading zero; USER is the reservation's user
// as ALPS names it when that is a word of letters, digits, '.', '_' and
// '-' (every Unix user name), else "?": a name of another form cannot
// make a reason that reads back as something else.
//
// Each kind of reason is one clause, told apart by its verb after "ALPS "
// ("has", "holds"), with its own alternative of DrainReason; a later kind
// adds its clause and alternative here and nowhere else.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "basil_proto/model.h"

namespace basild {

// One node as ALPS has it (node sync's view of an INVENTORY); the "has nid"
// clause names one whose state is not UP or whose role is not BATCH.
struct AlpsNodeView {
  std::uint32_t nid = 0;
  basil::NodeState state = basil::NodeState::kUp;
  basil::NodeRole role = basil::NodeRole::kBatch;
  bool operator==(const AlpsNodeView&) const = default;
};

// A node ALPS holds for a reservation that no Slurm job owns (an
// interactive session, an orphan in its grace period, a reservation being
// released while its applications end, another party's); the "holds nid"
// clause names it.
struct AlpsHold {
  std::uint32_t nid = 0;
  std::uint64_t reservation_id = 0;
  std::string user;
  bool operator==(const AlpsHold&) const = default;
};

// One alternative per clause of the grammar.
using DrainReason = std::variant<AlpsNodeView, AlpsHold>;

// The reason's text. An AlpsNodeView of a node UP and BATCH has no
// condition to name: "" (basild drains no such node).
std::string format_drain_reason(std::string_view prefix, const DrainReason& reason);

// The reason `text` stands for, when it is one basild writes with `prefix`;
// nullopt for any other text.
std::optional<DrainReason> parse_drain_reason(std::string_view prefix, std::string_view text);

// The NID a reason is about.
std::uint32_t drain_reason_nid(const DrainReason& reason);

}  // namespace basild
