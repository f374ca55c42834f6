// The programs a job runs against the emulated apsched, as on a Cray:
// aprun (a client of the daemon), apkill (the daemon's when it runs, else
// the state's) and apstat (read from the state). Each takes the words
// after its name; `state_dir` and `socket` come from --state and --socket
// before them (or the environment, see socket.h).
#pragma once

#include <string>
#include <vector>

#include "basil_proto/status.h"
#include "emulator/apsched/wire.h"

namespace emu::apsched {

// Where the programs find the emulated system.
struct Where {
  std::string state_dir;
  std::string socket;
};

// --state DIR and --socket PATH (also as --state=DIR) taken out of argv
// from `first` on, skipping index `skip`: up to the first other word when
// `until_word` (aprun: what follows is its command), else anywhere.
Where take_where(std::vector<std::string>& words, int argc, char** argv, int first, int skip, bool until_word);

// aprun's words: -n -N -d -j (as "-n 4" or "-n4"), then the command (after
// "--" or from the first word that is no option). kInvalidValue with the
// sentence aprun prints.
struct AprunArgs {
  Shape shape;
  std::vector<std::string> command;
};
basil::Result<AprunArgs> parse_aprun_args(const std::vector<std::string>& words);

// The reservation aprun claims: $BASIL_RESERVATION_ID, else
// $BATCH_PARTITION_ID, given as the environment's values (null: unset).
basil::Result<std::uint64_t> reservation_from(const char* basil_reservation_id, const char* batch_partition_id);

int aprun_main(const std::vector<std::string>& words, const Where& where);
int apkill_main(const std::vector<std::string>& words, const Where& where);
int apstat_main(const std::vector<std::string>& words, const Where& where);

}  // namespace emu::apsched
