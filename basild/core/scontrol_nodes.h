// Slurm's node listing as `scontrol -o show node` prints it (Slurm 22.05:
// no --json), read into SlurmNode records. Pure: text in, records out.
//
// One node per line, "NodeName=NAME key=value ...", in a fixed order in
// which the free texts come last: Reason (its own newlines printed as
// blanks, then Slurm's " [user@time]" stamp), then Comment and Extra (whose
// newlines are printed as they are). So:
//   - a line that does not start with "NodeName=" is the rest of a Comment
//     or an Extra and is skipped;
//   - State is the first " State=" word of the line;
//   - the Reason is what follows the first " Reason=" when no " Comment="
//     or " Extra=" comes before it (else those words are inside a comment
//     and the node has no reason), up to the stamp;
//   - a Comment or Extra holding a newline and "NodeName=..." can still
//     fake a line: the records are returned as listed, duplicates included,
//     and the planner (node_sync.h) acts on no name listed twice.
#pragma once

#include <string_view>
#include <vector>

#include "basild/core/node_control_port.h"

namespace basild {

std::vector<SlurmNode> parse_scontrol_nodes(std::string_view text);

// Sets `drain`, `down` and `fail` from a State value: '+'-separated words,
// each maybe followed by Slurm's marks ('*', '~', '#', '$', '@', '^', '!',
// '%', '-'), in any case. DRAIN, DRAINED and DRAINING set drain; DOWN sets
// down; FAIL and FAILING set fail.
void read_state_flags(std::string_view state, SlurmNode& node);

}  // namespace basild
