// `basil-emulator sdb ...`: the emulated system's Cray service database
// (core/sdb.h) printed as SQL or loaded into a MariaDB/MySQL server by running
// its `mysql` client, and kept in step with later node changes.
#pragma once

#include <string>

namespace emu {

// The sdb command; argv as main() got it, argv[word] being "sdb".
int sdb_main(int argc, char** argv, int word);

// After a committed node change: reloads the SDB that `sdb load` recorded in
// the state, if any. 0 when none is recorded or the reload succeeded; else
// kSdbStale, with a message on standard error (the node change stays).
inline constexpr int kSdbStale = 3;
int sdb_follow_node_change(const std::string& state_dir);

}  // namespace emu
