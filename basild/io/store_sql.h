// The SQLite store's SQL as named constants: the schema, one migration per
// version, and every statement the store runs. Inline, so that each
// statement is one object (the prepared-statement cache is keyed by its
// address). Not for use outside io/.
#pragma once

namespace basild {

namespace sql {

inline constexpr char kBegin[] = "BEGIN IMMEDIATE";
inline constexpr char kCommit[] = "COMMIT";
inline constexpr char kRollback[] = "ROLLBACK";

inline constexpr char kJournalWal[] = "PRAGMA journal_mode=WAL";
inline constexpr char kSynchronousNormal[] = "PRAGMA synchronous=NORMAL";
inline constexpr char kQuickCheck[] = "PRAGMA quick_check";
inline constexpr char kPageCount[] = "PRAGMA page_count";
inline constexpr char kPageSize[] = "PRAGMA page_size";
inline constexpr char kFreelistCount[] = "PRAGMA freelist_count";
inline constexpr char kAutoVacuum[] = "PRAGMA auto_vacuum";
// Before the first table is created (a new database): pages freed by
// pruning can then be given back to the file system (incremental_vacuum).
// An existing database keeps the mode it was created with.
inline constexpr char kAutoVacuumIncremental[] = "PRAGMA auto_vacuum=INCREMENTAL";
// After a checkpoint the WAL file is cut back to this size, so that a burst
// of writes does not leave it large for good.
inline constexpr char kJournalSizeLimit[] = "PRAGMA journal_size_limit=16777216";

inline constexpr char kCreateSchemaVersion[] =
    "CREATE TABLE IF NOT EXISTS schema_version ("
    " version INTEGER PRIMARY KEY,"
    " applied_ms INTEGER NOT NULL)";
inline constexpr char kSelectSchemaVersion[] = "SELECT coalesce(max(version), 0) FROM schema_version";
inline constexpr char kInsertSchemaVersion[] = "INSERT INTO schema_version (version, applied_ms) VALUES (?1, ?2)";

// Migration N takes the schema from version N-1 to N. Never edit one that has
// shipped: add the next.
inline constexpr char kSchemaV1[] = R"sql(
CREATE TABLE reservations (
  res_id       INTEGER PRIMARY KEY,
  batch_id     TEXT    NOT NULL DEFAULT '',
  user_name    TEXT    NOT NULL DEFAULT '',
  account      TEXT    NOT NULL DEFAULT '',
  nodes        TEXT    NOT NULL DEFAULT '',
  width        INTEGER NOT NULL DEFAULT 0,
  depth        INTEGER NOT NULL DEFAULT 0,
  nppn         INTEGER NOT NULL DEFAULT 0,
  nppcu        INTEGER NOT NULL DEFAULT 0,
  state        TEXT    NOT NULL,
  origin       TEXT    NOT NULL,
  pagg_id      INTEGER,
  intent_id    INTEGER,
  created_ms   INTEGER NOT NULL,
  confirmed_ms INTEGER,
  released_ms  INTEGER,
  last_seen_ms INTEGER
);
CREATE INDEX reservations_by_batch_id ON reservations (batch_id);
CREATE INDEX reservations_by_state ON reservations (state);

CREATE TABLE intents (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  batch_id   TEXT    NOT NULL,
  user_name  TEXT    NOT NULL,
  params     TEXT    NOT NULL,
  state      TEXT    NOT NULL,
  created_ms INTEGER NOT NULL,
  settled_ms INTEGER,
  res_id     INTEGER,
  detail     TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX intents_by_state ON intents (state);

CREATE TABLE jobs (
  source        TEXT    NOT NULL,
  job_id        TEXT    NOT NULL,
  state         TEXT    NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  last_seen_ms  INTEGER NOT NULL,
  ended_ms      INTEGER,
  PRIMARY KEY (source, job_id)
);

CREATE TABLE audit (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  time_ms   INTEGER NOT NULL,
  kind      TEXT    NOT NULL,
  res_id    INTEGER,
  batch_id  TEXT    NOT NULL DEFAULT '',
  user_name TEXT    NOT NULL DEFAULT '',
  nodes     TEXT    NOT NULL DEFAULT '',
  detail    TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_by_time ON audit (time_ms);

CREATE TABLE node_events (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  time_ms    INTEGER NOT NULL,
  nid        INTEGER NOT NULL,
  kind       TEXT    NOT NULL,
  from_state TEXT    NOT NULL DEFAULT '',
  to_state   TEXT    NOT NULL DEFAULT '',
  detail     TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX node_events_by_time ON node_events (time_ms);

CREATE TABLE timings (
  key        TEXT PRIMARY KEY,
  snapshot   TEXT    NOT NULL,
  updated_ms INTEGER NOT NULL
);

CREATE TABLE quarantine (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  time_ms      INTEGER NOT NULL,
  source_table TEXT    NOT NULL,
  row_json     TEXT    NOT NULL,
  reason       TEXT    NOT NULL
);
)sql";

// v2: the last good QUERY ENGINE answer per request protocol, so that a
// basild restarted while the main system is down still answers ENGINE.
inline constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE engine_answers (
  protocol   TEXT PRIMARY KEY,
  xml        TEXT    NOT NULL,
  updated_ms INTEGER NOT NULL
);
)sql";

// v3: who asked for an intent's RESERVE: basild's typed reserve, or a
// scheduler's RESERVE forwarded through /v1/basil (whose caller is told of a
// lost answer only as a failure, so that its reservation is a stray).
inline constexpr const char* kSchemaV3 = R"sql(
ALTER TABLE intents ADD COLUMN forwarded INTEGER NOT NULL DEFAULT 0;
)sql";

inline constexpr const char* kMigrations[] = {kSchemaV1, kSchemaV2, kSchemaV3};

// Reservations. Column order matches decode_reservation.
#define BASILD_RES_COLUMNS                                                                          \
  "res_id, batch_id, user_name, account, nodes, width, depth, nppn, nppcu, state, origin, pagg_id, " \
  "intent_id, created_ms, confirmed_ms, released_ms, last_seen_ms"
inline constexpr char kInsertReservation[] =
    "INSERT INTO reservations (" BASILD_RES_COLUMNS
    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";
inline constexpr char kSelectReservation[] = "SELECT " BASILD_RES_COLUMNS " FROM reservations WHERE res_id = ?1";
inline constexpr char kSelectReservationsByBatch[] =
    "SELECT " BASILD_RES_COLUMNS " FROM reservations WHERE batch_id = ?1 ORDER BY res_id";
inline constexpr char kSelectActiveReservations[] =
    "SELECT " BASILD_RES_COLUMNS
    " FROM reservations WHERE state NOT IN ('released', 'gone') ORDER BY res_id";
inline constexpr char kSelectAllReservations[] = "SELECT " BASILD_RES_COLUMNS " FROM reservations ORDER BY res_id";
#undef BASILD_RES_COLUMNS
inline constexpr char kDeleteReservation[] = "DELETE FROM reservations WHERE res_id = ?1";
// An INVENTORY row or an earlier record gets the RESERVE's facts; state,
// created, confirmed and last_seen stay.
inline constexpr char kUpgradeReservation[] =
    "UPDATE reservations SET batch_id = ?2, user_name = ?3, account = ?4, nodes = ?5, width = ?6,"
    " depth = ?7, nppn = ?8, nppcu = ?9, origin = ?10, intent_id = ?11 WHERE res_id = ?1";
inline constexpr char kUpdateState[] = "UPDATE reservations SET state = ?2 WHERE res_id = ?1";
inline constexpr char kUpdateOrigin[] = "UPDATE reservations SET origin = ?2 WHERE res_id = ?1";
inline constexpr char kUpdateConfirmed[] =
    "UPDATE reservations SET state = 'confirmed', pagg_id = ?2, confirmed_ms = ?3 WHERE res_id = ?1";
inline constexpr char kUpdateEnded[] = "UPDATE reservations SET state = ?2, released_ms = ?3 WHERE res_id = ?1";
inline constexpr char kUpdateLastSeen[] = "UPDATE reservations SET last_seen_ms = ?2 WHERE res_id = ?1";

// Intents. Column order matches decode_intent.
#define BASILD_INTENT_COLUMNS \
  "id, batch_id, user_name, params, state, created_ms, settled_ms, res_id, detail, forwarded"
inline constexpr char kInsertIntent[] =
    "INSERT INTO intents (batch_id, user_name, params, state, created_ms, forwarded)"
    " VALUES (?1, ?2, ?3, 'pending', ?4, ?5)";
inline constexpr char kSelectIntent[] = "SELECT " BASILD_INTENT_COLUMNS " FROM intents WHERE id = ?1";
inline constexpr char kSelectPendingIntents[] =
    "SELECT " BASILD_INTENT_COLUMNS " FROM intents WHERE state = 'pending' ORDER BY id";
inline constexpr char kSelectAllIntents[] = "SELECT " BASILD_INTENT_COLUMNS " FROM intents ORDER BY id";
#undef BASILD_INTENT_COLUMNS
inline constexpr char kCountPendingIntents[] = "SELECT count(*) FROM intents WHERE state = 'pending'";
inline constexpr char kSettleIntent[] =
    "UPDATE intents SET state = ?2, settled_ms = ?3, res_id = ?4, detail = ?5 WHERE id = ?1";
inline constexpr char kDeleteIntent[] = "DELETE FROM intents WHERE id = ?1";

// Jobs.
inline constexpr char kSelectLiveJobIds[] = "SELECT job_id FROM jobs WHERE source = ?1 AND state = 'live'";
inline constexpr char kUpsertLiveJob[] =
    "INSERT INTO jobs (source, job_id, state, first_seen_ms, last_seen_ms) VALUES (?1, ?2, 'live', ?3, ?3)"
    " ON CONFLICT (source, job_id) DO UPDATE SET state = 'live', last_seen_ms = ?3, ended_ms = NULL";
inline constexpr char kEndJob[] = "UPDATE jobs SET state = 'ended', ended_ms = ?3 WHERE source = ?1 AND job_id = ?2";
inline constexpr char kSelectLiveJobs[] =
    "SELECT source, job_id, state, first_seen_ms, last_seen_ms, ended_ms FROM jobs WHERE state = 'live'"
    " ORDER BY source, job_id";
inline constexpr char kSelectAllJobs[] =
    "SELECT source, job_id, state, first_seen_ms, last_seen_ms, ended_ms FROM jobs ORDER BY source, job_id";

// Audit.
inline constexpr char kInsertAudit[] =
    "INSERT INTO audit (time_ms, kind, res_id, batch_id, user_name, nodes, detail)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
// The newest ?2 at or after ?1, oldest first.
inline constexpr char kSelectAudit[] =
    "SELECT * FROM (SELECT id, time_ms, kind, res_id, batch_id, user_name, nodes, detail FROM audit"
    " WHERE time_ms >= ?1 ORDER BY id DESC LIMIT ?2) ORDER BY id";
inline constexpr char kSelectAllAudit[] =
    "SELECT id, time_ms, kind, res_id, batch_id, user_name, nodes, detail FROM audit ORDER BY id";
inline constexpr char kDeleteAudit[] = "DELETE FROM audit WHERE id = ?1";

// Node events.
inline constexpr char kInsertNodeEvent[] =
    "INSERT INTO node_events (time_ms, nid, kind, from_state, to_state, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
// The newest ?2 at or after ?1, oldest first.
inline constexpr char kSelectNodeEvents[] =
    "SELECT * FROM (SELECT id, time_ms, nid, kind, from_state, to_state, detail FROM node_events"
    " WHERE time_ms >= ?1 ORDER BY id DESC LIMIT ?2) ORDER BY id";

// Timings.
inline constexpr char kUpsertTiming[] =
    "INSERT INTO timings (key, snapshot, updated_ms) VALUES (?1, ?2, ?3)"
    " ON CONFLICT (key) DO UPDATE SET snapshot = ?2, updated_ms = ?3";
inline constexpr char kSelectTimings[] = "SELECT key, snapshot FROM timings ORDER BY key";

// The last good ENGINE answers.
inline constexpr char kUpsertEngineAnswer[] =
    "INSERT INTO engine_answers (protocol, xml, updated_ms) VALUES (?1, ?2, ?3)"
    " ON CONFLICT (protocol) DO UPDATE SET xml = ?2, updated_ms = ?3";
inline constexpr char kSelectEngineAnswers[] = "SELECT protocol, xml FROM engine_answers ORDER BY protocol";

// Retention: at most ?2 rows older than ?1 per statement, oldest first.
// Never an active reservation, a pending intent or a live job.
inline constexpr char kPruneAudit[] =
    "DELETE FROM audit WHERE id IN (SELECT id FROM audit WHERE time_ms < ?1 ORDER BY id LIMIT ?2)";
inline constexpr char kPruneNodeEvents[] =
    "DELETE FROM node_events WHERE id IN (SELECT id FROM node_events WHERE time_ms < ?1 ORDER BY id LIMIT ?2)";
inline constexpr char kPruneReservations[] =
    "DELETE FROM reservations WHERE res_id IN (SELECT res_id FROM reservations WHERE state IN ('released', 'gone')"
    " AND released_ms < ?1 ORDER BY released_ms LIMIT ?2)";
inline constexpr char kPruneIntents[] =
    "DELETE FROM intents WHERE id IN (SELECT id FROM intents WHERE state <> 'pending' AND settled_ms < ?1"
    " ORDER BY id LIMIT ?2)";
inline constexpr char kPruneJobs[] =
    "DELETE FROM jobs WHERE rowid IN (SELECT rowid FROM jobs WHERE state = 'ended' AND ended_ms < ?1"
    " ORDER BY ended_ms LIMIT ?2)";

// Quarantine.
inline constexpr char kInsertQuarantine[] =
    "INSERT INTO quarantine (time_ms, source_table, row_json, reason) VALUES (?1, ?2, ?3, ?4)";

}  // namespace sql

}  // namespace basild
