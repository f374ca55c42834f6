// basild.conf: strict parsing (unknown keys, bad types, ranges, enums and
// durations are errors naming the key and its line), the shipped example and
// the man page cover every key, and --check-config reports.
#include "basild/config/config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "tests/basild/config/config_support.h"

namespace basild {
namespace {

using namespace std::chrono_literals;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string source_file(const std::string& rel) { return std::string(BASIL_TEST_DATA) + "/../../" + rel; }

// Every "key = value" line of format_config's output, as "section.key".
std::vector<std::string> all_keys() {
  std::vector<std::string> keys;
  std::istringstream in(format_config(Config{}));
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.size() > 2 && line.front() == '[') {
      section = line.substr(1, line.find(']') - 1);
    } else if (auto eq = line.find(" = "); eq != std::string::npos) {
      keys.push_back(section + "." + line.substr(0, eq));
    }
  }
  return keys;
}

TEST(ConfigTest, EmptyTextGivesTheDefaults) {
  auto c = parse_config("");
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ(*c, Config{});
  EXPECT_EQ(c->apbasil.path, "/usr/bin/apbasil");
  EXPECT_EQ(c->apbasil.timeout, 60s);
  EXPECT_EQ(c->apbasil.max_concurrent, 4u);
  EXPECT_FALSE(c->basil.version.has_value());
  EXPECT_EQ(c->state.database, "/var/lib/basild/state.db");
  EXPECT_EQ(c->control.socket, "/run/basild/control.sock");
  EXPECT_EQ(c->control.mode, 0660u);
  EXPECT_EQ(c->poll.mode, PollMode::kSummaryHybrid);
  EXPECT_DOUBLE_EQ(c->reconcile.max_release_share, 0.25);
  EXPECT_EQ(c->conduit.mode, ConduitMode::kLocal);
}

TEST(ConfigTest, ReadsEveryKey) {
  auto c = parse_config(R"(
[apbasil]
path = "/opt/emu/basil-emulator"
args = ["--state", "/tmp/emu"]
timeout = "90s"
max_concurrent = 8
max_output_bytes = 1048576

[basil]
version = "1.2"
strict_decode = true

[conduit]
mode = "ssh-exec"
host = "login1"
port = 2222
user = "alpsres"
identity = "/etc/basild/id_ed25519"
known_hosts = "/etc/basild/known_hosts"
accept_new_host_key = true
remote_apbasil = "/opt/cray/bin/apbasil"
remote_args = ["-v"]
remote_apkill = "/opt/cray/bin/apkill"
remote_apkill_args = ["--state", "/tmp/emu", "apkill"]
gateway_helper = "/opt/basild/basil_gateway"
gateway_fallback_exec = true
gateway_spare_apbasil = false
connect_timeout = "5s"
keepalive_interval = "10s"
keepalive_count = 5
ciphers = ["chacha20-poly1305@openssh.com", "aes256-ctr"]
reconnect_min = "2s"
reconnect_max = "5m"

[state]
database = "/srv/basild/state.db"

[control]
socket = "/run/b.sock"
mode = "0600"
allowed_users = ["slurm", "1001", 42]
allowed_groups = ["wheel"]
max_request_bytes = 65536
idle_timeout = "2m"
max_connections = 2000
max_connections_per_uid = 16
header_timeout = "750ms"

[log]
level = "debug"
directory = "/var/tmp"
xml_log = true
xml_log_loc = "SLURM"
xml_log_max_bytes = 8192
xml_log_keep = 2

[poll]
mode = "inventory"
interval = "500ms"
inventory_max_age = "1m"
orphan_check_interval = 30

[reconcile]
grace = "10m"
consecutive = 5
max_releases_per_cycle = 2
max_release_share = 0.5
dry_run = true
interactive_batch_ids = ["interactive", "login"]
apkill = "/opt/cray/bin/apkill"
claims_timeout = "1h"

[[reconcile.source]]
type = "command"
name = "squeue"
command = ["/usr/bin/squeue", "-h", "-r", "-t", "all", "-o", "%A %T"]
timeout = "20s"

[[reconcile.source]]
type = "sqlite"
database = "/var/lib/sched/jobs.db"
query = "SELECT id FROM jobs"
)");
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ(c->apbasil.path, "/opt/emu/basil-emulator");
  EXPECT_EQ(c->apbasil.args, (std::vector<std::string>{"--state", "/tmp/emu"}));
  EXPECT_EQ(c->apbasil.timeout, 90s);
  EXPECT_EQ(c->apbasil.max_concurrent, 8u);
  EXPECT_EQ(c->apbasil.max_output_bytes, 1048576u);
  EXPECT_EQ(c->basil.version, basil::Dialect::k1_2);
  EXPECT_TRUE(c->basil.strict_decode);
  EXPECT_EQ(c->conduit.mode, ConduitMode::kSshExec);
  EXPECT_EQ(c->conduit.host, "login1");
  EXPECT_EQ(c->conduit.port, 2222u);
  EXPECT_EQ(c->conduit.user, "alpsres");
  EXPECT_EQ(c->conduit.identity, "/etc/basild/id_ed25519");
  EXPECT_EQ(c->conduit.known_hosts, "/etc/basild/known_hosts");
  EXPECT_TRUE(c->conduit.accept_new_host_key);
  EXPECT_EQ(c->conduit.remote_apbasil, "/opt/cray/bin/apbasil");
  EXPECT_EQ(c->conduit.remote_args, (std::vector<std::string>{"-v"}));
  EXPECT_EQ(c->conduit.remote_apkill, "/opt/cray/bin/apkill");
  EXPECT_EQ(c->conduit.remote_apkill_args, (std::vector<std::string>{"--state", "/tmp/emu", "apkill"}));
  EXPECT_EQ(c->conduit.gateway_helper, "/opt/basild/basil_gateway");
  EXPECT_TRUE(c->conduit.gateway_fallback_exec);
  // A key of an older basild: accepted, and a warning says it does nothing.
  EXPECT_EQ(c->retired_keys, (std::vector<std::string>{"conduit.gateway_spare_apbasil"}));
  const auto warnings = config_warnings(*c);
  EXPECT_NE(std::find_if(warnings.begin(), warnings.end(),
                         [](const std::string& w) {
                           return w.starts_with("conduit.gateway_spare_apbasil no longer does anything");
                         }),
            warnings.end());
  EXPECT_EQ(c->conduit.connect_timeout, 5s);
  EXPECT_EQ(c->conduit.keepalive_interval, 10s);
  EXPECT_EQ(c->conduit.keepalive_count, 5u);
  EXPECT_EQ(c->conduit.ciphers, (std::vector<std::string>{"chacha20-poly1305@openssh.com", "aes256-ctr"}));
  EXPECT_EQ(c->conduit.reconnect_min, 2s);
  EXPECT_EQ(c->conduit.reconnect_max, 5min);
  EXPECT_EQ(c->state.database, "/srv/basild/state.db");
  EXPECT_EQ(c->control.socket, "/run/b.sock");
  EXPECT_EQ(c->control.mode, 0600u);
  ASSERT_EQ(c->control.allowed_users.size(), 3u);
  EXPECT_EQ(c->control.allowed_users[0], (Principal{"slurm", std::nullopt}));
  EXPECT_EQ(c->control.allowed_users[1], (Principal{"", 1001u}));
  EXPECT_EQ(c->control.allowed_users[2], (Principal{"", 42u}));
  EXPECT_EQ(c->control.allowed_groups, (std::vector<Principal>{{"wheel", std::nullopt}}));
  EXPECT_EQ(c->control.max_request_bytes, 65536u);
  EXPECT_EQ(c->control.idle_timeout, 2min);
  EXPECT_EQ(c->control.max_connections, 2000u);
  EXPECT_EQ(c->control.max_connections_per_uid, 16u);
  EXPECT_EQ(c->control.header_timeout, 750ms);
  EXPECT_EQ(c->log.level, LogLevel::kDebug);
  EXPECT_EQ(c->log.directory, "/var/tmp");
  EXPECT_TRUE(c->log.xml_log);
  EXPECT_EQ(c->log.xml_log_loc, "SLURM");
  EXPECT_EQ(c->log.xml_log_max_bytes, 8192u);
  EXPECT_EQ(c->log.xml_log_keep, 2u);
  EXPECT_EQ(c->poll.mode, PollMode::kInventory);
  EXPECT_EQ(c->poll.interval, 500ms);
  EXPECT_EQ(c->poll.inventory_max_age, 1min);
  EXPECT_EQ(c->poll.orphan_check_interval, 30s);
  EXPECT_EQ(c->reconcile.grace, 10min);
  EXPECT_EQ(c->reconcile.consecutive, 5u);
  EXPECT_EQ(c->reconcile.max_releases_per_cycle, 2u);
  EXPECT_DOUBLE_EQ(c->reconcile.max_release_share, 0.5);
  EXPECT_TRUE(c->reconcile.dry_run);
  EXPECT_EQ(c->reconcile.interactive_batch_ids, (std::vector<std::string>{"interactive", "login"}));
  EXPECT_EQ(c->reconcile.apkill, "/opt/cray/bin/apkill");
  EXPECT_EQ(c->reconcile.claims_timeout, 1h);
  ASSERT_EQ(c->reconcile.sources.size(), 2u);
  EXPECT_EQ(c->reconcile.sources[0].type, JobSourceType::kCommand);
  EXPECT_EQ(c->reconcile.sources[0].name, "squeue");
  EXPECT_EQ(c->reconcile.sources[0].command.front(), "/usr/bin/squeue");
  EXPECT_EQ(c->reconcile.sources[0].timeout, 20s);
  EXPECT_EQ(c->reconcile.sources[1].type, JobSourceType::kSqlite);
  EXPECT_EQ(c->reconcile.sources[1].name, "sqlite-2");  // default name: type and position
  EXPECT_EQ(c->reconcile.sources[1].database, "/var/lib/sched/jobs.db");
  EXPECT_EQ(c->reconcile.sources[1].query, "SELECT id FROM jobs");
  EXPECT_EQ(c->reconcile.sources[1].timeout, 30s);
}

TEST(ConfigTest, UnknownKeyIsAnErrorNamingItAndItsLine) {
  ConfigError e = only_error("[apbasil]\npath = \"/usr/bin/apbasil\"\ntimeuot = 5\n");
  EXPECT_EQ(e.key, "apbasil.timeuot");
  EXPECT_EQ(e.line, 3u);
  EXPECT_EQ(e.column, 1u);
  EXPECT_NE(e.message.find("unknown key \"timeuot\" in [apbasil]"), std::string::npos) << e.message;
}

TEST(ConfigTest, UnknownSectionAndTopLevelKeyAreErrors) {
  ConfigParse p = parse_config_all("x = 1\n\n[apbsail]\npath = \"/a\"\n");
  ASSERT_EQ(p.errors.size(), 2u);
  EXPECT_EQ(p.errors[0].key, "x");
  EXPECT_EQ(p.errors[0].line, 1u);
  EXPECT_NE(p.errors[0].message.find("outside any section"), std::string::npos);
  EXPECT_EQ(p.errors[1].key, "apbsail");
  EXPECT_EQ(p.errors[1].line, 3u);
  EXPECT_NE(p.errors[1].message.find("unknown section [apbsail]"), std::string::npos);
}

TEST(ConfigTest, SectionThatIsNotATableIsAnError) {
  ConfigError e = only_error("apbasil = \"/usr/bin/apbasil\"\n");
  EXPECT_EQ(e.key, "apbasil");
  EXPECT_NE(e.message.find("must be a table"), std::string::npos) << e.message;
}

TEST(ConfigTest, UnknownKeyInsideAnInlineTableIsCaught) {
  ConfigError e = only_error("state = { database = \"/x.db\", databse = \"/y.db\" }\n");
  EXPECT_EQ(e.key, "state.databse");
  EXPECT_EQ(e.line, 1u);
}

TEST(ConfigTest, BadEnumListsTheAllowedWords) {
  ConfigError e = only_error("[log]\n\nlevel = \"verbose\"\n");
  EXPECT_EQ(e.key, "log.level");
  EXPECT_EQ(e.line, 3u);
  EXPECT_NE(e.message.find("\"debug\", \"info\", \"notice\", \"warning\", \"error\""), std::string::npos)
      << e.message;
  EXPECT_NE(e.message.find("got \"verbose\""), std::string::npos);

  EXPECT_EQ(only_error("[poll]\nmode = \"summary\"\n").key, "poll.mode");
  EXPECT_EQ(only_error("[conduit]\nmode = \"ssh\"\n").key, "conduit.mode");
  EXPECT_EQ(only_error("[geometry]\nallocation = \"half-node\"\n").key, "geometry.allocation");
  EXPECT_EQ(only_error("[geometry]\none_task_per_core = 1\n").key, "geometry.one_task_per_core");
}

TEST(ConfigTest, OutOfRangeNumbersAreErrors) {
  ConfigError e = only_error("[apbasil]\nmax_concurrent = 0\n");
  EXPECT_EQ(e.key, "apbasil.max_concurrent");
  EXPECT_EQ(e.line, 2u);
  EXPECT_NE(e.message.find("between 1 and 256"), std::string::npos) << e.message;
  EXPECT_EQ(only_error("[apbasil]\nmax_concurrent = 257\n").key, "apbasil.max_concurrent");
  EXPECT_EQ(only_error("[apbasil]\nmax_concurrent = -1\n").key, "apbasil.max_concurrent");
  EXPECT_EQ(only_error("[control]\nmax_request_bytes = 10\n").key, "control.max_request_bytes");
  EXPECT_EQ(only_error("[reconcile]\nconsecutive = 0\n").key, "reconcile.consecutive");
  EXPECT_EQ(only_error("[reconcile]\nmax_release_share = 0.0\n").key, "reconcile.max_release_share");
  EXPECT_EQ(only_error("[reconcile]\nmax_release_share = 1.5\n").key, "reconcile.max_release_share");
  EXPECT_TRUE(parse_config("[reconcile]\nmax_release_share = 1\n"));
}

TEST(ConfigTest, StateRetentionIsDaysFractionsAllowedAndQuickCheckIsZeroOrAMinuteOrMore) {
  auto c = parse_config("[state]\naudit_days = 0.5\nreleased_days = 0\nquick_check_interval = \"1h\"\n");
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_DOUBLE_EQ(c->state.audit_days, 0.5);
  EXPECT_DOUBLE_EQ(c->state.released_days, 0.0);
  EXPECT_EQ(c->state.quick_check_interval, 1h);
  EXPECT_DOUBLE_EQ(Config{}.state.audit_days, 30.0);
  EXPECT_DOUBLE_EQ(Config{}.state.released_days, 7.0);
  EXPECT_EQ(Config{}.state.quick_check_interval, 10min);
  EXPECT_TRUE(parse_config("[state]\nquick_check_interval = 0\n"));
  EXPECT_EQ(only_error("[state]\naudit_days = -1\n").key, "state.audit_days");
  EXPECT_EQ(only_error("[state]\nreleased_days = 40000\n").key, "state.released_days");
  EXPECT_EQ(only_error("[state]\nreleased_days = \"7\"\n").key, "state.released_days");
  ConfigError e = only_error("[state]\nquick_check_interval = \"30s\"\n");
  EXPECT_EQ(e.key, "state.quick_check_interval");
  EXPECT_NE(e.message.find("0 (at start only) or at least 1m"), std::string::npos) << e.message;
  Config odd;
  odd.state.audit_days = 0.005;
  odd.state.released_days = 1.25;
  auto back = parse_config(format_config(odd));
  ASSERT_TRUE(back) << format_config(odd);
  EXPECT_EQ(back->state, odd.state);
  EXPECT_NE(format_config(odd).find("audit_days = 0.005\n"), std::string::npos) << format_config(odd);
}

TEST(ConfigTest, WrongTypesAreErrors) {
  ConfigError e = only_error("[apbasil]\nmax_concurrent = \"4\"\n");
  EXPECT_NE(e.message.find("must be an integer, not a string"), std::string::npos) << e.message;
  EXPECT_NE(only_error("[log]\nxml_log = \"yes\"\n").message.find("true or false"), std::string::npos);
  EXPECT_EQ(only_error("[apbasil]\nargs = \"--state /x\"\n").key, "apbasil.args");
  EXPECT_EQ(only_error("[apbasil]\nargs = [\"a\", 3]\n").key, "apbasil.args[1]");
  EXPECT_EQ(only_error("[reconcile]\ninteractive_batch_ids = [\"\"]\n").key, "reconcile.interactive_batch_ids[0]");
  EXPECT_EQ(only_error("[conduit]\nremote_apkill_args = [\"-v\", \"\"]\n").key, "conduit.remote_apkill_args[1]");
  EXPECT_EQ(only_error("[conduit]\nremote_apkill_args = \"-v\"\n").key, "conduit.remote_apkill_args");
}

TEST(ConfigTest, PathsMustBeAbsolute) {
  ConfigError e = only_error("[state]\ndatabase = \"state.db\"\n");
  EXPECT_EQ(e.key, "state.database");
  EXPECT_NE(e.message.find("absolute path"), std::string::npos);
  EXPECT_EQ(only_error("[apbasil]\npath = \"apbasil\"\n").key, "apbasil.path");
  EXPECT_EQ(only_error("[conduit]\nremote_apkill = \"apkill\"\n").key, "conduit.remote_apkill");
  EXPECT_EQ(only_error("[log]\nxml_log_loc = \"basil.log\"\n").key, "log.xml_log_loc");
  EXPECT_TRUE(parse_config("[log]\nxml_log_loc = \"/var/log/x.log\"\n"));
  EXPECT_EQ(only_error("[control]\nsocket = \"/" + std::string(120, 's') + "\"\n").key, "control.socket");
}

TEST(ConfigTest, DurationsAreSecondsOrAStringWithAUnit) {
  auto c = parse_config("[apbasil]\ntimeout = 5\n[control]\nidle_timeout = \"1500ms\"\n"
                        "[poll]\ninventory_max_age = \"2h\"\norphan_check_interval = \"3m\"\n"
                        "[reconcile]\ngrace = \"0s\"\n");
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ(c->apbasil.timeout, 5s);
  EXPECT_EQ(c->control.idle_timeout, 1500ms);
  EXPECT_EQ(c->poll.inventory_max_age, 2h);
  EXPECT_EQ(c->poll.orphan_check_interval, 3min);
  EXPECT_EQ(c->reconcile.grace, 0s);

  for (const char* bad : {"\"5 s\"", "\"1m30s\"", "\"-5s\"", "\"5\"", "\"\"", "\"5d\"", "1.5", "true", "-3",
                          "\"9999999999999s\""}) {
    ConfigError e = only_error(std::string("[apbasil]\ntimeout = ") + bad + "\n");
    EXPECT_EQ(e.key, "apbasil.timeout") << bad;
    EXPECT_EQ(e.line, 2u) << bad;
  }
  ConfigError range = only_error("[apbasil]\ntimeout = \"2h\"\n");
  EXPECT_NE(range.message.find("between 100ms and 1h (got 2h)"), std::string::npos) << range.message;
}

TEST(ConfigTest, DurationTextRoundTrips) {
  EXPECT_EQ(parse_duration("500ms"), 500ms);
  EXPECT_EQ(parse_duration("30s"), 30s);
  EXPECT_EQ(parse_duration("5m"), 5min);
  EXPECT_EQ(parse_duration("1h"), 1h);
  EXPECT_FALSE(parse_duration("1.5s"));
  EXPECT_FALSE(parse_duration("s"));
  EXPECT_FALSE(parse_duration(" 5s"));
  EXPECT_EQ(format_duration(0ms), "0s");
  EXPECT_EQ(format_duration(1500ms), "1500ms");
  EXPECT_EQ(format_duration(90s), "90s");
  EXPECT_EQ(format_duration(120s), "2m");
  EXPECT_EQ(format_duration(7200s), "2h");
  for (Duration d : {Duration(1), Duration(999), Duration(61000), Duration(3'600'000 * 5)}) {
    EXPECT_EQ(parse_duration(format_duration(d)), d);
  }
}

TEST(ConfigTest, VersionIsAutoOrAPinnedProtocol) {
  EXPECT_FALSE(parse_config("[basil]\nversion = \"auto\"\n")->basil.version);
  EXPECT_EQ(parse_config("[basil]\nversion = \"1.0\"\n")->basil.version, basil::Dialect::k1_0);
  EXPECT_EQ(parse_config("[basil]\nversion = \"1.1\"\n")->basil.version, basil::Dialect::k1_1);
  EXPECT_EQ(parse_config("[basil]\nversion = 1.3\n")->basil.version, basil::Dialect::k1_3);
  ConfigError plus = only_error("[basil]\nversion = \"1.1+\"\n");
  EXPECT_NE(plus.message.find("engine version tells"), std::string::npos) << plus.message;
  EXPECT_EQ(only_error("[basil]\nversion = \"1.4\"\n").key, "basil.version");
  EXPECT_EQ(only_error("[basil]\nversion = 1.5\n").key, "basil.version");
}

TEST(ConfigTest, SocketModeIsOctal) {
  EXPECT_EQ(parse_config("[control]\nmode = \"0600\"\n")->control.mode, 0600u);
  EXPECT_EQ(parse_config("[control]\nmode = \"660\"\n")->control.mode, 0660u);
  EXPECT_EQ(parse_config("[control]\nmode = 0o640\n")->control.mode, 0640u);
  ConfigError dec = only_error("[control]\nmode = 660\n");
  EXPECT_EQ(dec.key, "control.mode");
  EXPECT_NE(dec.message.find("not what it looks like"), std::string::npos) << dec.message;
  EXPECT_EQ(only_error("[control]\nmode = \"0980\"\n").key, "control.mode");
  EXPECT_EQ(only_error("[control]\nmode = \"01777\"\n").key, "control.mode");
}

TEST(ConfigTest, TheMetricsListenerTakesANumericAddressAndAPort) {
  EXPECT_EQ(parse_config("")->metrics.listen, "");
  EXPECT_EQ(parse_config("[metrics]\nlisten = \"127.0.0.1:9469\"\n")->metrics.listen, "127.0.0.1:9469");
  EXPECT_EQ(parse_config("[metrics]\nlisten = \"[::1]:9469\"\n")->metrics.listen, "[::1]:9469");
  EXPECT_EQ(parse_config("[metrics]\nlisten = \"\"\n")->metrics.listen, "");
  const auto v6 = parse_listen_address("[::1]:80");
  ASSERT_TRUE(v6.value);
  EXPECT_EQ(v6.value->address, "::1");
  EXPECT_EQ(v6.value->port, 80);
  for (const char* bad : {"localhost:9469", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "::1:9469",
                          "[127.0.0.1]:9469", "127.0.0.1:x", "127.0.0.1:"}) {
    const ConfigError e = only_error(std::string("[metrics]\nlisten = \"") + bad + "\"\n");
    EXPECT_EQ(e.key, "metrics.listen") << bad;
    EXPECT_NE(e.message.find(bad), std::string::npos) << e.message;
  }
  EXPECT_NE(only_error("[metrics]\nlisten = \"basil:9469\"\n").message.find("host names are not looked up"),
            std::string::npos);
  EXPECT_EQ(only_error("[metrics]\nport = 9469\n").key, "metrics.port");
}

TEST(ConfigTest, AllowListsTakeNamesAndIds) {
  EXPECT_EQ(only_error("[control]\nallowed_users = [\"\"]\n").key, "control.allowed_users[0]");
  EXPECT_EQ(only_error("[control]\nallowed_users = [-1]\n").key, "control.allowed_users[0]");
  EXPECT_EQ(only_error("[control]\nallowed_groups = [true]\n").key, "control.allowed_groups[0]");
  EXPECT_EQ(only_error("[control]\nallowed_users = [\"99999999999\"]\n").key, "control.allowed_users[0]");
}

TEST(ConfigTest, JobSourcesAreCheckedByType) {
  ConfigError no_cmd = only_error("[[reconcile.source]]\ntype = \"command\"\n");
  EXPECT_EQ(no_cmd.key, "reconcile.source[0]");
  EXPECT_NE(no_cmd.message.find("needs command"), std::string::npos) << no_cmd.message;

  ConfigError mixed =
      only_error("[[reconcile.source]]\ntype = \"command\"\ncommand = [\"/bin/true\"]\nquery = \"SELECT 1\"\n");
  EXPECT_EQ(mixed.key, "reconcile.source[0].query");
  EXPECT_EQ(mixed.line, 4u);

  EXPECT_EQ(only_error("[[reconcile.source]]\ntype = \"command\"\ncommand = [\"squeue\"]\n").key,
            "reconcile.source[0].command");
  EXPECT_EQ(only_error("[[reconcile.source]]\ncommand = [\"/bin/true\"]\n").key, "reconcile.source[0]");
  EXPECT_EQ(only_error("[[reconcile.source]]\ntype = \"sqlite\"\ndatabase = \"/x.db\"\n").key,
            "reconcile.source[0]");
  EXPECT_EQ(only_error("[[reconcile.source]]\ntype = \"sqlite\"\ndatabase = \"/x.db\"\nquery = \" \"\n").key,
            "reconcile.source[0].query");
  EXPECT_EQ(only_error("[[reconcile.source]]\ntype = \"command\"\ncommand = [\"/bin/true\"]\ncolour = 1\n").key,
            "reconcile.source[0].colour");

  ConfigError single = only_error("[reconcile.source]\ntype = \"command\"\ncommand = [\"/bin/true\"]\n");
  EXPECT_NE(single.message.find("[[reconcile.source]]"), std::string::npos) << single.message;

  ConfigError dup = only_error(
      "[[reconcile.source]]\ntype = \"command\"\nname = \"a\"\ncommand = [\"/bin/true\"]\n"
      "[[reconcile.source]]\ntype = \"command\"\nname = \"a\"\ncommand = [\"/bin/false\"]\n");
  EXPECT_NE(dup.message.find("two sources are named \"a\""), std::string::npos) << dup.message;
}

TEST(ConfigTest, PollIntervalsMustBeConsistent) {
  ConfigError e = only_error("[poll]\ninterval = \"1m\"\ninventory_max_age = \"30s\"\n");
  EXPECT_EQ(e.key, "poll.inventory_max_age");
  EXPECT_EQ(e.line, 3u);
  EXPECT_NE(e.message.find("must not be shorter than poll.interval"), std::string::npos);
  // Only the interval is in the file: the error points at it.
  ConfigError e2 = only_error("[poll]\ninterval = \"2m\"\n");
  EXPECT_EQ(e2.key, "poll.interval");
  EXPECT_EQ(e2.line, 2u);
}

TEST(ConfigTest, EveryErrorIsReportedInLineOrder) {
  ConfigParse p = parse_config_all(
      "[log]\nlevel = \"loud\"\n[apbasil]\ntimeout = \"forever\"\nmax_concurrent = 0\nbogus = 1\n");
  ASSERT_EQ(p.errors.size(), 4u);
  EXPECT_EQ(p.errors[0].line, 2u);
  EXPECT_EQ(p.errors[1].line, 4u);
  EXPECT_EQ(p.errors[2].line, 5u);
  EXPECT_EQ(p.errors[3].line, 6u);

  auto r = parse_config("[log]\nlevel = \"loud\"\n[apbasil]\nbogus = 1\n", "/etc/basild.conf");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), basil::Code::kInvalidValue);
  EXPECT_EQ(r.status().line(), 2);
  EXPECT_EQ(r.status().path(), "log.level");
  EXPECT_NE(r.status().message().find("/etc/basild.conf:2:9: log.level: must be one of"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("/etc/basild.conf:4:1: apbasil.bogus: unknown key"), std::string::npos)
      << r.status().message();
}

TEST(ConfigTest, SyntaxErrorGivesItsLine) {
  ConfigError e = only_error("[apbasil]\npath = \"/usr/bin/apbasil\n");
  EXPECT_EQ(e.line, 2u);
  EXPECT_NE(e.message.find("TOML syntax"), std::string::npos);
  ConfigError dup = only_error("[apbasil]\ntimeout = 1\ntimeout = 2\n");
  EXPECT_EQ(dup.line, 3u);
}

TEST(ConfigTest, FormattedConfigParsesBackEqual) {
  EXPECT_EQ(parse_config(format_config(Config{})).value(), Config{});

  Config c;
  c.apbasil.path = "/opt/a \"quoted\" path\\x";
  c.apbasil.args = {"--state", "tab\there"};
  c.apbasil.timeout = 1500ms;
  c.basil.version = basil::Dialect::k1_1;
  c.control.mode = 0600;
  c.control.allowed_users = {{"alice", std::nullopt}, {"", 7u}};
  c.log.level = LogLevel::kWarning;
  c.poll.mode = PollMode::kInventory;
  c.reconcile.max_release_share = 0.1;
  c.geometry.one_task_per_core = true;
  c.geometry.allocation = basil::AllocationMode::kSubNode;
  c.slurm = {true, "/opt/scontrol", "/etc/slurm/x.conf", "cn%03d", 7, "ALPS (site):", 2500ms, "login2"};
  c.reconcile.sources = {
      {JobSourceType::kCommand, "sq", {"/usr/bin/squeue", "-h"}, "", "", 5s},
      {JobSourceType::kSqlite, "db", {}, "/var/lib/jobs.db", "SELECT id FROM jobs WHERE s = 'R'", 2s},
  };
  auto back = parse_config(format_config(c));
  ASSERT_TRUE(back) << back.status().message() << "\n" << format_config(c);
  EXPECT_EQ(*back, c);
}

// The example's convention: prose comments start with "# ", and every key is
// shown commented out with its default value as "#key = value". So the file
// parses as it is, and parses again with those lines uncommented, to the
// defaults: the example cannot drift from the struct. A key the example
// sets (an active "key = value" line after its commented default) keeps
// its setting.
std::string uncomment_keys(const std::string& text) {
  const auto key_of = [](const std::string& line) { return line.substr(0, line.find(" = ")); };
  std::set<std::string> set_keys;  // "#key = default" followed by "key = value"
  {
    std::istringstream in(text);
    std::string line, before;
    while (std::getline(in, line)) {
      if (!line.empty() && line[0] != '#' && line.find(" = ") != std::string::npos &&
          before.rfind("#" + key_of(line) + " = ", 0) == 0)
        set_keys.insert(key_of(line));
      before = line;
    }
  }
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.size() > 1 && line[0] == '#' && line[1] != ' ' && line[1] != '#' &&
        set_keys.count(key_of(line.substr(1))) == 0)
      line.erase(0, 1);
    out += line + "\n";
  }
  return out;
}

// conf/failover: the two login nodes' basild.conf differ in the controller
// each serves alone, and each names one.
TEST(ConfigTest, TheFailoverExamplesParseAndDifferInTheirControllerAlone) {
  auto one = parse_config(read_file(source_file("conf/failover/basild.conf")), "conf/failover/basild.conf");
  auto two =
      parse_config(read_file(source_file("conf/failover/basild-login2.conf")), "conf/failover/basild-login2.conf");
  ASSERT_TRUE(one) << one.status().message();
  ASSERT_TRUE(two) << two.status().message();
  EXPECT_EQ(one->slurm.slurmctld_host, "login1");
  EXPECT_EQ(two->slurm.slurmctld_host, "login2");
  two->slurm.slurmctld_host = one->slurm.slurmctld_host;
  EXPECT_EQ(*one, *two);
  EXPECT_TRUE(one->slurm.node_sync);
  EXPECT_TRUE(speaks_for_scheduler(one->reconcile)) << "the job table both read";
  const std::string fragment = read_file(source_file("conf/failover/slurm.conf.fragment"));
  EXPECT_NE(fragment.find("SlurmctldHost=login1\nSlurmctldHost=login2\n"), std::string::npos) << fragment;
}

// conf/site: the one-host site's basild admits the controller's hooks
// (SlurmUser slurm: allowed, and the socket's group) and reads the job
// table the general example reads. scripts/packages.sh starts the site.
TEST(ConfigTest, TheExampleSitesConfigurationAdmitsSlurmsHooksAndReadsTheExamplesJobTable) {
  auto site = parse_config(read_file(source_file("conf/site/basild.conf")), "conf/site/basild.conf");
  auto general = parse_config(read_file(source_file("conf/basild.conf")), "conf/basild.conf");
  ASSERT_TRUE(site) << site.status().message();
  ASSERT_TRUE(general) << general.status().message();
  const Principal slurm{.name = "slurm", .id = std::nullopt};
  EXPECT_EQ(site->control.group, slurm);
  EXPECT_EQ(site->control.allowed_users, std::vector<Principal>{slurm});
  EXPECT_EQ(site->reconcile.sources, general->reconcile.sources);
  EXPECT_TRUE(site->slurm.node_sync);
  EXPECT_FALSE(site->metrics.listen.empty());
}

TEST(ConfigTest, ExampleConfParsesAndShowsEveryKeyWithItsDefault) {
  const std::string text = read_file(source_file("conf/basild.conf"));
  ASSERT_FALSE(text.empty());
  auto c = parse_config(text, "conf/basild.conf");
  ASSERT_TRUE(c) << c.status().message();
  for (const auto& key : all_keys()) {
    const std::string name = key.substr(key.find('.') + 1);
    EXPECT_NE(text.find("#" + name + " = "), std::string::npos) << key << " is not shown in conf/basild.conf";
  }

  auto all = parse_config(uncomment_keys(text), "conf/basild.conf (uncommented)");
  ASSERT_TRUE(all) << all.status().message();
  Config defaults_but_sources = *all;
  defaults_but_sources.reconcile.sources.clear();
  // What the example sets: node sync on (off by default).
  EXPECT_TRUE(c->slurm.node_sync);
  defaults_but_sources.slurm.node_sync = false;
  EXPECT_EQ(defaults_but_sources, Config{}) << format_config(*all);
  // The active Slurm source, and the commented sqlite alternative.
  ASSERT_EQ(all->reconcile.sources.size(), 2u);
  EXPECT_EQ(all->reconcile.sources[0].type, JobSourceType::kCommand);
  EXPECT_EQ(all->reconcile.sources[1].type, JobSourceType::kSqlite);
  EXPECT_EQ(c->reconcile.sources.size(), 1u);
}

TEST(ConfigTest, ManPageDocumentsEveryKeyAndSection) {
  const std::string man = read_file(source_file("man/man5/basild.conf.5"));
  ASSERT_FALSE(man.empty());
  std::set<std::string> sections;
  for (const auto& key : all_keys()) {
    const std::string section = key.substr(0, key.find('.'));
    const std::string name = key.substr(key.find('.') + 1);
    sections.insert(section);
    EXPECT_NE(man.find(".B " + name + "\n"), std::string::npos) << key << " is not in basild.conf(5)";
  }
  for (const auto& s : sections) {
    EXPECT_NE(man.find(".SH [" + s), std::string::npos) << "[" << s << "] has no section in basild.conf(5)";
  }
  EXPECT_NE(man.find(".B type\n"), std::string::npos);  // [[reconcile.source]] keys
  EXPECT_NE(man.find(".B command\n"), std::string::npos);
  EXPECT_NE(man.find(".B query\n"), std::string::npos);
}

TEST(ConfigTest, CheckConfigReportsOkWarningsAndTheEffectiveConfig) {
  ConfigCheck ok = check_config("[poll]\nmode = \"summary-hybrid\"\n[basil]\nversion = \"1.2\"\n", "b.conf");
  EXPECT_TRUE(ok.ok);
  EXPECT_EQ(ok.report.rfind("b.conf: OK\n", 0), 0u) << ok.report;
  EXPECT_NE(ok.report.find("no job-table source"), std::string::npos) << ok.report;
  EXPECT_NE(ok.report.find("QUERY SUMMARY needs 1.3"), std::string::npos) << ok.report;
  EXPECT_NE(ok.report.find("version = \"1.2\""), std::string::npos) << ok.report;

  ConfigCheck bad = check_config("[apbasil]\nmax_concurrent = 0\nfoo = 1\n", "b.conf");
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.report.rfind("b.conf: 2 errors\n", 0), 0u) << bad.report;
  EXPECT_NE(bad.report.find("b.conf:3:1: apbasil.foo: unknown key"), std::string::npos) << bad.report;
}

TEST(ConfigTest, SshConduitNeedsHostAndKnownHosts) {
  auto p = parse_config_all("[conduit]\nmode = \"ssh-gateway\"\n");
  ASSERT_EQ(p.errors.size(), 2u);
  EXPECT_EQ(p.errors[0].key, "conduit.mode");
  EXPECT_NE(p.errors[0].message.find("conduit.host is required"), std::string::npos) << p.errors[0].message;
  EXPECT_NE(p.errors[1].message.find("conduit.known_hosts is required"), std::string::npos);
  EXPECT_TRUE(parse_config("[conduit]\nmode = \"ssh-gateway\"\nhost = \"l\"\nknown_hosts = \"/k\"\n"));
  EXPECT_EQ(only_error("[conduit]\nreconnect_min = \"10s\"\nreconnect_max = \"5s\"\n").key, "conduit.reconnect_max");
  EXPECT_EQ(only_error("[conduit]\nciphers = [\"aes128-cbc\"]\n").key, "conduit.ciphers");
  EXPECT_EQ(only_error("[conduit]\nciphers = [\"\"]\n").key, "conduit.ciphers[0]");
}

TEST(ConfigTest, ConduitHostsAreLoginNodesInOrderEachWithItsPortOrTheSectionsPort) {
  auto c = parse_config("[conduit]\nmode = \"ssh-gateway\"\nport = 2222\nknown_hosts = \"/k\"\n"
                        "hosts = [\"login1\", \"login2:22\", \"[fe80::1]:2200\", \"fe80::2\"]\n");
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ(conduit_hosts(c->conduit), (std::vector<ConduitHost>{
                                           {"login1", 2222}, {"login2", 22}, {"fe80::1", 2200}, {"fe80::2", 2222}}));
  // What the configuration writer gives back reads the same.
  auto again = parse_config(format_config(*c));
  ASSERT_TRUE(again) << again.status().message() << format_config(*c);
  EXPECT_EQ(again->conduit, c->conduit);
  // The single host is the one login node.
  auto one = parse_config("[conduit]\nmode = \"ssh-exec\"\nhost = \"l\"\nknown_hosts = \"/k\"\n");
  ASSERT_TRUE(one);
  EXPECT_EQ(conduit_hosts(one->conduit), (std::vector<ConduitHost>{{"l", 22}}));
}

TEST(ConfigTest, ConduitHostsRefusesEntriesThatNameNoLoginNodeAndTheSingleHostBeside) {
  for (const char* bad : {"[]", "[\"\"]", "[\"l:0\"]", "[\"l:65536\"]", "[\"l:x\"]", "[\"l:\"]", "[\"[fe80::1\"]",
                          "[\"[fe80::1]x\"]", "[\":22\"]", "[\"a\", \"a\"]"}) {
    const auto e = only_error(std::string("[conduit]\nhosts = ") + bad + "\n");
    EXPECT_EQ(e.key.rfind("conduit.hosts", 0), 0u) << bad << ": " << e.key << ": " << e.message;
  }
  const auto both = only_error("[conduit]\nhost = \"a\"\nhosts = [\"b\"]\n");
  EXPECT_EQ(both.key, "conduit.hosts");
  EXPECT_NE(both.message.find("both set"), std::string::npos) << both.message;
  EXPECT_TRUE(parse_config("[conduit]\nmode = \"ssh-gateway\"\nhosts = [\"a\"]\nknown_hosts = \"/k\"\n"));
}

TEST(ConfigTest, WarningsNameRiskySettings) {
  Config c;
  c.reconcile.sources.push_back({JobSourceType::kCommand, "sq", {"/bin/true"}, "", "", 30s});
  c.reconcile.dry_run = true;
  c.control.mode = 0666;
  auto w = config_warnings(c);
  auto has = [&](std::string_view s) {
    return std::any_of(w.begin(), w.end(), [&](const std::string& x) { return x.find(s) != std::string::npos; });
  };
  EXPECT_TRUE(has("dry_run = true"));
  EXPECT_TRUE(has("any local user"));
  EXPECT_FALSE(has("no job-table source"));
}

}  // namespace
}  // namespace basild
