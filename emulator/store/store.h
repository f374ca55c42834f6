// The emulator's SQLite store: one database per emulated system, WAL, every
// request one IMMEDIATE transaction (so concurrent emulator processes are
// serialised and never commit a processor twice). No SQLite type leaks out.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basil_proto/status.h"
#include "emulator/core/state.h"

namespace emu {

class Store {
 public:
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // The database file inside a state directory.
  static std::string db_path(const std::string& state_dir);

  // Creates the state directory (if missing) and a new database for the world;
  // fails when one exists there already unless `replace`. Runs an integrity check.
  static basil::Result<std::unique_ptr<Store>> create(const std::string& state_dir, const State& world,
                                                      bool replace = false);
  // Opens an existing database (no integrity check: that is `check`'s job).
  static basil::Result<std::unique_ptr<Store>> open(const std::string& state_dir);

  // One transaction begun IMMEDIATE: loads the world, calls fn, applies the
  // Delta it returns and commits. SQLITE_BUSY is retried (busy timeout plus
  // back-off) for up to `busy_budget_ms`. When fn fails nothing is written.
  // kNodes loads the system, counters, faults and node ranges only (enough for
  // ENGINE and SUMMARY, whose cost then follows NID ranges, not reservations).
  enum class Scope : std::uint8_t { kAll, kNodes };
  using TxnFn = std::function<basil::Result<Delta>(const State&)>;
  basil::Status transact(const TxnFn& fn, Scope scope = Scope::kAll, int busy_budget_ms = 120000);

  // One read transaction (BEGIN DEFERRED): loads the world and calls fn;
  // nothing is written, so nothing is synced to disk. A query that changes
  // nothing (no fault configured) is answered this way.
  using ReadFn = std::function<void(const State&)>;
  basil::Status read(const ReadFn& fn, Scope scope = Scope::kAll, int busy_budget_ms = 120000);

  // Read-only snapshot (still one transaction).
  basil::Result<State> load();

  // Settings kept beside the world in the meta table, each read or written
  // in a statement of its own (busy timeout as above): the SDB target of
  // `sdb load` is one (key "sdb"). Absent: nullopt; putting nullopt erases.
  // The world's own keys ("system", "faults") are refused. A state directory
  // from before a setting existed simply has none: no migration.
  basil::Result<std::optional<std::string>> setting(const std::string& key);
  basil::Status put_setting(const std::string& key, const std::optional<std::string>& value);

  // PRAGMA integrity_check plus the emulator's own consistency check.
  basil::Result<std::vector<std::string>> check();

 private:
  basil::Status run(const char* begin, const TxnFn& fn, Scope scope, int busy_budget_ms);
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Processor sets as text: "0-15,32".
std::string format_indices(const std::vector<std::uint32_t>& sorted);
basil::Result<std::vector<std::uint32_t>> parse_indices(std::string_view text);

}  // namespace emu
