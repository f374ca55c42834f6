// Every message id basild logs, with its level and meaning: the catalogue
// that basild(8) lists under LOG MESSAGES (a test keeps the two the same).
// Logger takes only ids from this table: an id that is not here does not
// compile. A message's text may change between versions; its id, level and
// meaning do not.
#pragma once

#include <string_view>

#include "basild/config/config.h"

namespace basild {

struct LogIdEntry {
  std::string_view id;
  LogLevel level;
  std::string_view meaning;
};

inline constexpr LogIdEntry kLogIds[] = {
    {"B0001", LogLevel::kError,
     "basild cannot start (configuration, state database, control socket); the reason follows."},
    {"B0002", LogLevel::kNotice,
     "basild started, with the configuration file it read."},
    {"B0003", LogLevel::kError,
     "SIGHUP: the new configuration is refused; the running one stays."},
    {"B0004", LogLevel::kNotice,
     "stopping on SIGTERM or SIGINT."},
    {"B0100", LogLevel::kWarning,
     "a configuration setting that works but is probably not meant (one line each)."},
    {"B0101", LogLevel::kInfo,
     "the state database is open, with its schema version."},
    {"B0102", LogLevel::kInfo,
     "the XML log is on, and where it goes."},
    {"B0103", LogLevel::kInfo,
     "the control socket listens."},
    {"B0104", LogLevel::kNotice,
     "no command or sqlite job-table source: orphans are reported, never released."},
    {"B0105", LogLevel::kWarning,
     "the kept QUERY ENGINE answers cannot be read."},
    {"B0106", LogLevel::kWarning,
     "a good QUERY ENGINE answer cannot be kept."},
    {"B0107", LogLevel::kNotice,
     "node sync to Slurm ([slurm] node_sync) is on, with its scontrol, SLURM_CONF, node names and bound; or, after a SIGHUP, off."},
    {"B0108", LogLevel::kNotice,
     "SIGHUP: the new configuration took effect; which changes wait for a restart."},
    {"B0109", LogLevel::kNotice,
     "stopped."},
    {"B0110", LogLevel::kWarning,
     "control.allowed_users names no such user."},
    {"B0111", LogLevel::kWarning,
     "control.allowed_groups names no such group."},
    {"B0112", LogLevel::kInfo,
     "the metrics listener ([metrics] listen) serves GET /metrics, the machine map's page and /nodestat.json on its TCP address."},
    {"B0119", LogLevel::kWarning,
     "what apbasil_proxy reads beside the control socket (SOCKET.json) cannot be written; the proxy then uses its defaults."},
    {"B0120", LogLevel::kWarning,
     "rows of the state database that do not decode were moved to its table quarantine at start (how many)."},
    {"B0121", LogLevel::kWarning,
     "one row moved to quarantine at start: its table, the reason and the row (the first 10)."},
    {"B0122", LogLevel::kNotice,
     "the state database was made by an older basild: pruned pages are reused, the file does not shrink."},
    {"B0130", LogLevel::kWarning,
     "a process group that a basild before this one left running (an apbasil, a job-table command or its children, after a crash or kill -9) is killed at start."},
    {"B0131", LogLevel::kWarning,
     "the file recording the children's process groups (DATABASE.children) cannot be opened: a crash may leave a grandchild running."},
    {"B0190", LogLevel::kInfo,
     "an XML log record, when XML_LOG_LOC is SLURM (the daemon's own log)."},
    {"B0201", LogLevel::kNotice,
     "the ALPS engine and the BASIL dialect negotiated."},
    {"B0202", LogLevel::kWarning,
     "QUERY ENGINE failed; basild retries after a back-off."},
    {"B0210", LogLevel::kWarning,
     "a poll (SUMMARY or INVENTORY) failed."},
    {"B0212", LogLevel::kWarning,
     "ALPS ignores the reservations-only INVENTORY form: full INVENTORYs for the rest of the run."},
    {"B0213", LogLevel::kWarning,
     "ALPS ignores the changecount INVENTORY form: full INVENTORYs for the rest of the run."},
    {"B0220", LogLevel::kError,
     "the state database cannot be read while an INVENTORY is applied."},
    {"B0221", LogLevel::kError,
     "the state database cannot be written while an INVENTORY is applied."},
    {"B0230", LogLevel::kNotice,
     "an intent whose RESERVE answer was lost adopted the reservation ALPS made for its job."},
    {"B0231", LogLevel::kInfo,
     "an intent is dropped: its RESERVE never reached ALPS."},
    {"B0232", LogLevel::kWarning,
     "a reservation vanished from ALPS without basild releasing it; its job's nodes are not protected."},
    {"B0233", LogLevel::kDebug,
     "a reservation made by someone else is recorded as seen."},
    {"B0234", LogLevel::kDebug,
     "a reservation is released: its last claim ended."},
    {"B0235", LogLevel::kDebug,
     "a reservation made outside basild (seen) left ALPS: released by whoever made it, such as the other "
     "controller's basild."},
    {"B0240", LogLevel::kNotice,
     "a node changed state, role or scheduling (an event)."},
    {"B0241", LogLevel::kNotice,
     "how many node changes one poll saw, when over 16 (each is still an event)."},
    {"B0250", LogLevel::kError,
     "a forwarded CONFIRM or RELEASE was done by ALPS (its answer passed on) but basild could not record it."},
    {"B0251", LogLevel::kError,
     "a CONFIRM or RELEASE (POST /v1/confirm, /v1/release) was done by ALPS but basild could not record it: 503."},
    {"B0252", LogLevel::kNotice,
     "confirmations and releases kept while the state database failed are written now."},
    {"B0253", LogLevel::kError,
     "the state database fails writes (disk full, ...): health says so until a write succeeds."},
    {"B0254", LogLevel::kNotice,
     "the state database takes writes again."},
    {"B0255", LogLevel::kInfo,
     "retention pruned old rows from the state database, and its size."},
    {"B0256", LogLevel::kError,
     "the state database file was removed, replaced or truncated while basild runs."},
    {"B0257", LogLevel::kNotice,
     "the state database path names the file basild opened again, whole."},
    {"B0258", LogLevel::kError,
     "the state database failed PRAGMA quick_check while basild runs."},
    {"B0259", LogLevel::kNotice,
     "the state database passes PRAGMA quick_check again."},
    {"B0260", LogLevel::kWarning,
     "retention could not prune the state database, or give its freed pages back; tried again later."},
    {"B0301", LogLevel::kError,
     "a RESERVE is refused: its intent cannot be written to the state database."},
    {"B0302", LogLevel::kWarning,
     "a RESERVE got no answer; its intent waits for the next INVENTORY to settle it."},
    {"B0303", LogLevel::kError,
     "a reservation was granted but cannot be recorded."},
    {"B0304", LogLevel::kDebug,
     "a reservation granted through basild (POST /v1/reserve)."},
    {"B0305", LogLevel::kWarning,
     "a RESERVE refused before ALPS (a bad request): no intent, no apbasil call."},
    {"B0306", LogLevel::kDebug,
     "a reservation granted to a scheduler's forwarded RESERVE, recorded."},
    {"B0307", LogLevel::kDebug,
     "a reservation released by the scheduler (forwarded RELEASE)."},
    {"B0308", LogLevel::kWarning,
     "ALPS refused a job's RESERVE as PERMANENT, but a fresh INVENTORY has a listed node not UP: answered as transient."},
    {"B0309", LogLevel::kInfo,
     "a RESERVE waits for the release of a reservation on its nodes: one handed to basild (its RELEASE loop runs) "
     "or another job's, not handed over yet."},
    {"B0313", LogLevel::kInfo,
     "a RESERVE that ALPS refused is tried once more: a suspend-sync poll switched out a reservation on its nodes, "
     "or one was released (gang scheduling or preemption started the job beside another Slurm suspends)."},
    {"B0314", LogLevel::kInfo,
     "a RESERVE that ALPS refused while another job's reservation is switched in on its nodes waits, up to [slurm] "
     "suspend_reserve_wait, for Slurm to suspend that job and basild to switch it out (gang scheduling)."},
    {"B0310", LogLevel::kWarning,
     "a RELEASE is not proven; the reconciler tries again."},
    {"B0311", LogLevel::kDebug,
     "a reservation released, with the number of RELEASE calls it took."},
    {"B0312", LogLevel::kWarning,
     "a job's release found nothing recorded for it and the INVENTORY that would record another basild's "
     "reservation of it failed: the orphan check releases it later."},
    {"B0401", LogLevel::kError,
     "a reconcile cycle is skipped: the state database cannot be read."},
    {"B0402", LogLevel::kWarning,
     "a job-table source starts failing (its name and error follow): no cycle releases anything until it answers. "
     "Once, not every cycle."},
    {"B0403", LogLevel::kNotice,
     "a job-table source answers again after B0402."},
    {"B0410", LogLevel::kError,
     "orphan release held (alarm): too many orphans at once, or a job table that suddenly empties."},
    {"B0411", LogLevel::kNotice,
     "the orphan release alarm cleared."},
    {"B0412", LogLevel::kNotice,
     "dry run: what would be released."},
    {"B0420", LogLevel::kNotice,
     "a reservation adopted for a live job."},
    {"B0421", LogLevel::kWarning,
     "an orphan's claims outlived reconcile.claims_timeout: apkill -9 of its applications."},
    {"B0422", LogLevel::kWarning,
     "an apkill of one application failed."},
    {"B0423", LogLevel::kWarning,
     "a forwarded apkill (POST /v1/apkill, from apkill_proxy) failed."},
    {"B0430", LogLevel::kError,
     "a reservation cannot be released (state database)."},
    {"B0431", LogLevel::kWarning,
     "an orphan or a stray is released."},
    {"B0432", LogLevel::kInfo,
     "a reservation the reconciler releases for a reason other than orphan or stray (the reason follows)."},
    {"B0440", LogLevel::kNotice,
     "with a backup controller: this basild's slurmctld is in charge; it releases orphans and syncs Slurm's nodes."},
    {"B0441", LogLevel::kNotice,
     "with a backup controller: another slurmctld is in charge; its basild releases orphans and syncs nodes."},
    {"B0442", LogLevel::kWarning,
     "with a backup controller: scontrol ping cannot tell which slurmctld is in charge (why follows); no orphan is "
     "released and no node changed until it can."},
    {"B0470", LogLevel::kWarning,
     "the ssh link to the Cray is lost (a session dropped, or none could be opened at start), with why; basild reconnects. Logged once per outage."},
    {"B0471", LogLevel::kInfo,
     "the ssh link to the Cray is up for the first time since basild started, on the login node named."},
    {"B0472", LogLevel::kNotice,
     "the ssh link to the Cray is back after an outage, on the login node named, with the outage's length in seconds."},
    {"B0473", LogLevel::kInfo,
     "the ssh link moved back to an earlier login node in [conduit] hosts (no outage)."},
    {"B0480", LogLevel::kNotice,
     "a reservation switched out (its job suspended) or in (its job running again), confirmed by ALPS's STATUS, with the time it took and the calls."},
    {"B0481", LogLevel::kWarning,
     "ALPS refused to switch a reservation for good (an EXCLUSIVE reservation, suspend/resume off): its job is resumed (refused SWITCH OUT) or requeued (refused SWITCH IN), with that sentence as its AdminComment."},
    {"B0482", LogLevel::kWarning,
     "a SWITCH not confirmed by STATUS in time, or not answered: tried again at the next poll."},
    {"B0483", LogLevel::kError,
     "suspend sync cannot read or write the state database: that poll, or that reservation's switch, is skipped (a SWITCH OUT is never sent unless the record says suspended first)."},
    {"B0484", LogLevel::kWarning,
     "scontrol could not set a job's AdminComment, or resume or requeue it, after ALPS refused a switch."},
    {"B0485", LogLevel::kNotice,
     "suspend sync turned on (at start or reload, with its poll interval) or off."},
    {"B0490", LogLevel::kError,
     "the XML log file cannot be opened again (at rotation or SIGHUP): a symbolic link, not a regular file, not owned by basild's uid, or an open error; no XML records are written until a SIGHUP opens it."},
    {"B0491", LogLevel::kNotice,
     "stopping: apbasil calls still running after a second are killed (their callers answered, a RESERVE's intent left for the next start)."},
    {"B0501", LogLevel::kNotice,
     "a node ALPS does not have UP and BATCH is drained in Slurm, with the reason given (and the one it replaces, when basild's own)."},
    {"B0502", LogLevel::kNotice,
     "a node basild drained is resumed in Slurm: ALPS has it UP and BATCH again."},
    {"B0503", LogLevel::kWarning,
     "scontrol cannot list Slurm's nodes (slurmctld down, scontrol failing or timed out): no node sync this cycle; logged again only when the error changes."},
    {"B0504", LogLevel::kNotice,
     "Slurm's nodes are listed again after B0503."},
    {"B0505", LogLevel::kWarning,
     "a drain or resume of one node failed (scontrol's status and stderr follow); tried again at the next cycle, logged again only when the error changes."},
    {"B0506", LogLevel::kInfo,
     "a resume not done: re-read just before, Slurm no longer shows the node drained by basild (an admin changed it)."},
    {"B0507", LogLevel::kInfo,
     "the nodes node sync leaves alone, by why (held-by-other, down-in-slurm, unknown-to-slurm, not-in-alps, listed-twice, bound), when that list changes."},
    {"B0901", LogLevel::kError,
     "the ALPS loop ended by an exception: a bug, please report it with the log."},
};

consteval bool log_id_catalogued(std::string_view id, LogLevel level) {
  for (const auto& e : kLogIds)
    if (e.id == id) return e.level == level;
  return false;
}

// A message id of level `L`, checked against the catalogue when the program
// compiles: an id that is not there, or is there with another level, is an
// error.
template <LogLevel L>
class LogId {
 public:
  consteval LogId(const char* id) : id_(id) {  // implicit from a literal on purpose
    if (!log_id_catalogued(id_, L)) throw "a log message id not in basild/daemon/log_ids.h at this level";
  }
  std::string_view view() const { return id_; }

 private:
  std::string_view id_;
};

}  // namespace basild
