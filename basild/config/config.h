// basild's configuration: one struct with the documented defaults (every key is
// in man/man5/basild.conf.5), a strict parser from TOML text and the report
// behind `basild --check-config`. The parser takes text, never a file: the
// daemon reads the file and passes its contents and its name.
//
// Strictness: an unknown section or key, a value of the wrong type, a number
// out of range, an unknown enum word or an unparsable duration is an error
// that names the key and the line it is on. All errors are collected, not
// just the first.
//
// Durations are either an integer number of seconds (`timeout = 60`) or a
// string of a non-negative integer and a unit: "ms", "s", "m" or "h"
// ("500ms", "30s", "5m", "1h"). Units cannot be mixed ("1m30s" is an error:
// write "90s"). Sizes are integers of bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "basil_proto/dialect.h"
#include "basild/core/geometry.h"
#include "basil_proto/status.h"
#include "basild/core/poll_policy.h"

namespace basild {

using Duration = std::chrono::milliseconds;

// [apbasil]: the local apbasil command (conduit mode "local").
struct ApbasilConfig {
  std::string path = "/usr/bin/apbasil";  // absolute; run directly (argv), never by a shell
  std::vector<std::string> args;          // extra arguments after the path (the emulator's
                                          // --state DIR, for example); none by default
  Duration timeout = std::chrono::seconds(60);  // per call; the process group is killed after
  std::uint32_t max_concurrent = 4;             // calls at once, 1..256; the rest queue
  std::uint64_t max_output_bytes = 256ull << 20;  // a response longer than this is an error
  bool operator==(const ApbasilConfig&) const = default;
};

// [basil]: protocol version.
struct BasilConfig {
  std::optional<basil::Dialect> version;  // nullopt ("auto"): negotiated by QUERY ENGINE;
                                          // else a pinned protocol (1.0, 1.1, 1.2, 1.3)
  bool strict_decode = false;  // unknown elements/attributes are errors instead of warnings
  // A forwarded QUERY ENGINE is answered with ALPS's last answer to its
  // protocol while that answer is younger than this (0: always asked).
  Duration engine_max_age = std::chrono::seconds(60);
  bool operator==(const BasilConfig&) const = default;
};

// [conduit]: how apbasil is reached. "local": [apbasil] on this host; the
// ssh modes reach apbasil on the main system's login node (basild/conduit/),
// with [apbasil]'s timeout, max_concurrent and max_output_bytes.
enum class ConduitMode : std::uint8_t { kLocal, kSshExec, kSshGateway };
struct ConduitConfig {
  ConduitMode mode = ConduitMode::kLocal;
  std::string host;                 // the login node: this or `hosts` is required by the ssh modes
  // Login nodes in order of preference, each "name", "name:port" or
  // "[address]:port" (a bare name takes `port`); not with `host`.
  std::vector<std::string> hosts;
  std::uint32_t port = 22;
  std::string user;                 // "": the user basild runs as
  std::string identity;             // private key file; "": the ssh agent
  std::string known_hosts;          // required by the ssh modes; the only file consulted
  bool accept_new_host_key = false; // trust an unknown host key on first use (and record it)
  std::string remote_apbasil = "/usr/bin/apbasil";      // on the login node
  std::vector<std::string> remote_args;                 // after remote_apbasil
  std::string remote_apkill = "/usr/bin/apkill";        // on the login node: [reconcile] apkill's stand-in
  std::vector<std::string> remote_apkill_args;          // before "-SIGNAL APID"
  std::string gateway_helper = "/usr/local/libexec/basil_gateway";  // on the login node
  bool gateway_fallback_exec = false;  // helper missing: use ssh-exec for that session
  Duration connect_timeout = std::chrono::seconds(10);
  Duration keepalive_interval = std::chrono::seconds(30);  // 0: none
  std::uint32_t keepalive_count = 3;
  std::vector<std::string> ciphers;  // ssh ciphers in order of preference; empty: basild's choice
  Duration reconnect_min = std::chrono::seconds(1);
  Duration reconnect_max = std::chrono::seconds(60);
  bool operator==(const ConduitConfig&) const = default;
};

// [state]: the SQLite state database, how long it keeps what ended, and how
// often basild checks it while running.
struct StateConfig {
  std::string database = "/var/lib/basild/state.db";  // "<database>.lock" beside it
  // Days kept (fractions allowed: 0.5 is 12 hours; 0: for ever).
  double audit_days = 30;    // audit entries and node events
  double released_days = 7;  // released or gone reservations, settled intents, ended jobs
  Duration quick_check_interval = std::chrono::minutes(10);  // PRAGMA quick_check while running; 0: at start only
  bool operator==(const StateConfig&) const = default;
};

// A user or a group in an allow-list: by name or by numeric id. Names are
// resolved by the daemon (getpwnam/getgrnam) when the socket starts.
struct Principal {
  std::string name;                 // empty when given by id
  std::optional<std::uint32_t> id;  // set when given as a number ("1000" or 1000)
  bool operator==(const Principal&) const = default;
};

// [control]: the control socket (HTTP/1.1 + JSON over a Unix socket).
struct ControlConfig {
  std::string socket = "/run/basild/control.sock";
  std::uint32_t mode = 0660;              // file mode of the socket, "0660"
  std::optional<Principal> group;         // the socket's group (chown); unset: basild's own
  std::vector<Principal> allowed_users;   // peer uids allowed besides root and basild's own uid
  std::vector<Principal> allowed_groups;  // peer gids allowed
  std::uint64_t max_request_bytes = 1u << 20;   // headers and body; 1 KiB..64 MiB
  Duration idle_timeout = std::chrono::seconds(30);  // a connection idle this long is closed
  std::uint64_t max_connections = 1024;  // open at once; beyond it 503 and close; 1..60000
  std::uint64_t max_connections_per_uid = 64;  // from one uid but root's and basild's; 1..60000
  Duration header_timeout = std::chrono::seconds(5);  // to send a request's headers; 100ms..1h
  bool operator==(const ControlConfig&) const = default;
};

// [metrics]: a read-only HTTP listener on TCP for Prometheus and people:
// GET /metrics, never a control route. Off unless `listen` is set.
struct MetricsConfig {
  std::string listen;  // "ADDRESS:PORT", a numeric IPv4 or [IPv6] address; "": off
  bool operator==(const MetricsConfig&) const = default;
};

// "127.0.0.1:9469" or "[::1]:9469" as an address and a port, or why not.
struct ListenAddress {
  std::string address;  // numeric, without brackets
  std::uint16_t port = 0;
};
struct ListenParse {
  std::optional<ListenAddress> value;
  std::string error;  // when no value
};
ListenParse parse_listen_address(std::string_view text);

enum class LogLevel : std::uint8_t { kDebug, kInfo, kNotice, kWarning, kError };

// [log]: the main log (stderr/journal) and the XML log.
struct LogConfig {
  LogLevel level = LogLevel::kInfo;
  std::string directory = "/var/log/basild";  // where basil_xml.log goes by default
  bool xml_log = false;     // log every request and response (env XML_LOG also enables it)
  std::string xml_log_loc;  // "": <directory>/basil_xml.log; "SLURM": the main log; else a path
  std::uint64_t xml_log_max_bytes = 64ull << 20;  // rotate when the file grows past this
  std::uint32_t xml_log_keep = 5;                 // rotated files kept (basil_xml.log.1 ...)
  bool operator==(const LogConfig&) const = default;
};

// [poll]: polling policy (core/poll_policy.h). summary-hybrid polls the cheap
// SUMMARY and fetches INVENTORY only when node data changed or reservations
// are due a check; inventory sends a full INVENTORY every poll, as Slurm did.
struct PollConfig {
  PollMode mode = PollMode::kSummaryHybrid;
  Duration interval = std::chrono::seconds(10);               // one poll per interval
  Duration inventory_max_age = std::chrono::minutes(5);       // full INVENTORY at least this often
  Duration orphan_check_interval = std::chrono::seconds(60);  // reservations checked this often
  bool operator==(const PollConfig&) const = default;
};

// One source of the scheduler's job table ([[reconcile.source]]).
// kBasild: the jobs that reserved through basild and have not released
// (needs no keys; on its own it does not speak for the scheduler).
enum class JobSourceType : std::uint8_t { kCommand, kSqlite, kBasild };
struct JobSource {
  JobSourceType type = JobSourceType::kCommand;
  std::string name;                  // for logs and stats; default "command-N"/"sqlite-N"
  std::vector<std::string> command;  // kCommand: argv, run without a shell; prints live ids
  std::string database;              // kSqlite: database file (opened read-only)
  std::string query;                 // kSqlite: first column of each row is a live job id
  Duration timeout = std::chrono::seconds(30);  // a slower source fails the cycle (fail safe)
  bool operator==(const JobSource&) const = default;
};

// [reconcile]: orphan cleanup: ALPS reservations whose batch job the
// scheduler no longer runs are released (core/reconciler.h has the rules).
struct ReconcileConfig {
  std::vector<JobSource> sources;  // without a command or sqlite one: dry run
  Duration grace = std::chrono::minutes(5);  // an orphan must be seen so for this long...
  std::uint32_t consecutive = 3;             // ...and in this many inventories in a row (K)
  std::uint32_t max_releases_per_cycle = 10;
  double max_release_share = 0.25;  // a cycle releasing more of all batch reservations alarms...
  std::uint32_t release_share_floor = 2;  // ...unless it releases at most this many
  bool dry_run = false;             // log what would be released, release nothing
  std::vector<std::string> interactive_batch_ids;  // never released, besides "UNKNOWN"
  std::string apkill = "/usr/bin/apkill";
  std::vector<std::string> apkill_args;  // before "-SIGNAL APID" (the emulator's --state DIR apkill)
  Duration claims_timeout = std::chrono::minutes(10);  // claims above 0 this long: apkill
  bool operator==(const ReconcileConfig&) const = default;
};

// [geometry]: the site policy that turns a job-form reserve into RESERVE
// parameters: the nppcu of a job that gives no ntasks_per_core, and whole- or
// sub-node allocation. A request's "policy" may override it.
struct GeometryConfig {
  bool one_task_per_core = false;  // nppcu 1 when the job gives no ntasks_per_core
  basil::AllocationMode allocation = basil::AllocationMode::kWholeNode;  // "whole-node" | "sub-node"
  bool shared = false;  // reserve SHARED, which ALPS can switch out when the job is suspended
  bool operator==(const GeometryConfig&) const = default;
};

// [slurm]: node state from ALPS to Slurm (core/node_sync.h has the rules):
// nodes ALPS does not have UP and BATCH are drained in Slurm with a reason
// naming ALPS's state, and resumed when ALPS has them back; a node drained
// for any other reason is never resumed. Off by default.
struct SlurmConfig {
  bool node_sync = false;
  std::string scontrol = "/usr/bin/scontrol";  // run directly (argv), never by a shell
  std::string slurm_conf;                      // SLURM_CONF for scontrol; "": basild's own environment's
  std::string node_name_format = "nid%05d";    // Slurm's name of a NID (core/slurm_names.h)
  std::uint32_t max_changes_per_cycle = 10;    // drains and resumes per cycle, 1..100000
  std::string reason_prefix = "basild:";       // marks basild's drains; letters, digits, " :()._/-"
  Duration timeout = std::chrono::seconds(30);  // per scontrol call; its process group is killed after
  // A site with a backup controller runs a basild beside each slurmctld and
  // names here the SlurmctldHost this one serves: only the basild whose
  // slurmctld `scontrol ping` shows in charge releases orphans and changes
  // Slurm's nodes (basild(8) FAILOVER). "": no backup, always in charge.
  std::string slurmctld_host;
  // Suspension carried to ALPS (daemon/switch_runner.h): the job table's
  // states read every suspend_poll, a suspended job's reservation switched
  // out and a resumed one's switched in. Off by default.
  bool suspend_sync = false;
  Duration suspend_poll = std::chrono::seconds(5);  // 1 s .. 60 s
  // How long a RESERVE ALPS refused on the nodes of another job's switched-in
  // reservation waits for Slurm to suspend that job (gang scheduling's next
  // time slice) and basild to switch it out, before the refusal stands.
  Duration suspend_reserve_wait = std::chrono::seconds(75);  // 0 .. 4 min (a control call ends at 5)
  bool operator==(const SlurmConfig&) const = default;
};

struct Config {
  ApbasilConfig apbasil;
  BasilConfig basil;
  ConduitConfig conduit;
  StateConfig state;
  ControlConfig control;
  MetricsConfig metrics;
  LogConfig log;
  PollConfig poll;
  ReconcileConfig reconcile;
  GeometryConfig geometry;
  SlurmConfig slurm;
  // Keys an older basild read and this one ignores ("conduit.gateway_compress"):
  // a site's edited conffile keeps them, so they are accepted, with a warning.
  std::vector<std::string> retired_keys;
  bool operator==(const Config&) const = default;
};


// One problem in a config file. `key` is dotted ("apbasil.timeout"); line and
// column are 1-based (0 when the problem has no place, e.g. a syntax error
// that toml++ could not locate).
struct ConfigError {
  std::string key;
  std::uint32_t line = 0;
  std::uint32_t column = 0;
  std::string message;
  // "basild.conf:12:1: apbasil.timeout: must be between 1s and 1h"
  std::string to_string(std::string_view origin) const;
};

// Everything the parser found: the config (defaults where a key is absent or
// bad) and every error. Usable only when `errors` is empty.
struct ConfigParse {
  Config config;
  std::vector<ConfigError> errors;
  bool ok() const { return errors.empty(); }
};

ConfigParse parse_config_all(std::string_view text);

// The config, or a kInvalidValue Status located at the first error whose
// message lists every error, one per line, prefixed with `origin`.
basil::Result<Config> parse_config(std::string_view text, std::string_view origin = "basild.conf");
// Only the sections named (the rest at their defaults), as parse_config
// reports errors: for a program that needs a part of basild's file and
// runs too often to read all of it (apbasil_proxy's front, on every call
// of the scheduler). Still a whole TOML document: a syntax error anywhere
// is an error. Other sections, unknown ones and the checks across
// sections are not looked at.
basil::Result<Config> parse_config_sections(std::string_view text, std::span<const std::string_view> sections,
                                            std::string_view origin = "basild.conf");

// The effective configuration as TOML: every key, defaults included. Parsing
// it gives back an equal Config.
std::string format_config(const Config& config);

// Points a valid config may still get wrong (no job-table source: the
// reconciler runs dry; a relative path...). Pure: nothing is checked on disk.
std::vector<std::string> config_warnings(const Config& config);

// A command or sqlite source is configured: the reconciler may release.
bool speaks_for_scheduler(const ReconcileConfig& c);

// `basild --check-config`: "OK" or the errors, then the warnings and the
// effective configuration. `ok` is what the exit status reports.
struct ConfigCheck {
  bool ok = false;
  std::string report;
};
ConfigCheck check_config(std::string_view text, std::string_view origin);

// Words used in the file and in reports.
std::string_view conduit_mode_name(ConduitMode m);

// A login node of [conduit] hosts (or its one host).
struct ConduitHost {
  std::string host;
  std::uint32_t port = 22;
  bool operator==(const ConduitHost&) const = default;
};
// "name", "name:port" or "[address]:port" (an IPv6 address in brackets; a
// bare one, having colons, is taken whole); nullopt for an empty name, a
// port that is no number in 1..65535, or a bracket not closed.
std::optional<ConduitHost> parse_conduit_host(std::string_view entry, std::uint32_t default_port);
// The login nodes in their order: `hosts` parsed, else `host` on `port`.
std::vector<ConduitHost> conduit_hosts(const ConduitConfig& c);
std::string_view log_level_name(LogLevel l);
std::string_view poll_mode_name(PollMode m);
std::string_view job_source_type_name(JobSourceType t);
// "500ms", "30s", "5m", "1h": the largest unit that divides the duration.
std::string format_duration(Duration d);
// Duration as the config takes it in a string; nullopt when it does not parse.
std::optional<Duration> parse_duration(std::string_view text);

}  // namespace basild
