// Values the config reader refuses with the key named: durations too large
// to hold, control characters in paths; and the names of [control] resolved
// by --check-config as at start.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "basild/config/config.h"
#include "basild/config/principals.h"
#include "tests/basild/config/config_support.h"

namespace basild {
namespace {

// The single error of a text that must have exactly one.
struct DurationKey {
  const char* section;  // the TOML before the key
  const char* key;      // as errors name it
  const char* max;      // as errors write it
};

// Every duration key, with its maximum.
const DurationKey kDurationKeys[] = {
    {"[apbasil]\ntimeout", "apbasil.timeout", "1h"},
    {"[conduit]\nconnect_timeout", "conduit.connect_timeout", "10m"},
    {"[conduit]\nkeepalive_interval", "conduit.keepalive_interval", "1h"},
    {"[conduit]\nreconnect_min", "conduit.reconnect_min", "1h"},
    {"[conduit]\nreconnect_max", "conduit.reconnect_max", "24h"},
    {"[control]\nidle_timeout", "control.idle_timeout", "1h"},
    {"[poll]\ninterval", "poll.interval", "1h"},
    {"[poll]\ninventory_max_age", "poll.inventory_max_age", "24h"},
    {"[poll]\norphan_check_interval", "poll.orphan_check_interval", "24h"},
    {"[reconcile]\ngrace", "reconcile.grace", "24h"},
    {"[reconcile]\nclaims_timeout", "reconcile.claims_timeout", "24h"},
    {"[[reconcile.source]]\ntype = \"basild\"\ntimeout", "reconcile.source[0].timeout", "1h"},
    {"[slurm]\ntimeout", "slurm.timeout", "10m"},
};

TEST(ConfigValuesTest, ADurationTooLargeToHoldSaysTooLargeNamingTheMaximum) {
  for (const auto& k : kDurationKeys) {
    for (const std::string value : {"9223372036854775807", "\"9223372036854775807s\"", "\"99999999999999ms\""}) {
      ConfigError e = only_error(std::string(k.section) + " = " + value + "\n");
      EXPECT_EQ(e.key, k.key) << value;
      EXPECT_NE(e.message.find("is too large"), std::string::npos) << e.key << ": " << e.message;
      EXPECT_NE(e.message.find(std::string(" and ") + k.max + " "), std::string::npos) << e.key << ": " << e.message;
      EXPECT_EQ(e.message.find("negative"), std::string::npos) << e.key << ": " << e.message;
    }
  }
}

TEST(ConfigValuesTest, DurationsOutOfRangeSayWhichEnd) {
  EXPECT_NE(only_error("[apbasil]\ntimeout = 3601\n").message.find("is too large: must be between 100ms and 1h (got 3601 seconds)"),
            std::string::npos);
  EXPECT_NE(only_error("[apbasil]\ntimeout = \"2h\"\n").message.find("is too large: must be between 100ms and 1h (got 2h)"),
            std::string::npos);
  EXPECT_NE(only_error("[apbasil]\ntimeout = \"50ms\"\n").message.find("is too small"), std::string::npos);
  EXPECT_NE(only_error("[apbasil]\ntimeout = -3\n").message.find("must not be negative (got -3)"), std::string::npos);
  EXPECT_TRUE(parse_config("[apbasil]\ntimeout = 3600\n"));
}

// Every key that holds a path, as "TOML before the value" and the key errors name.
const std::pair<const char*, const char*> kPathKeys[] = {
    {"[apbasil]\npath = ", "apbasil.path"},
    {"[conduit]\nidentity = ", "conduit.identity"},
    {"[conduit]\nknown_hosts = ", "conduit.known_hosts"},
    {"[conduit]\nremote_apbasil = ", "conduit.remote_apbasil"},
    {"[conduit]\nremote_apkill = ", "conduit.remote_apkill"},
    {"[conduit]\ngateway_helper = ", "conduit.gateway_helper"},
    {"[state]\ndatabase = ", "state.database"},
    {"[control]\nsocket = ", "control.socket"},
    {"[log]\ndirectory = ", "log.directory"},
    {"[log]\nxml_log_loc = ", "log.xml_log_loc"},
    {"[reconcile]\napkill = ", "reconcile.apkill"},
    {"[[reconcile.source]]\ntype = \"sqlite\"\nquery = \"SELECT 1\"\ndatabase = ", "reconcile.source[0].database"},
};

TEST(ConfigValuesTest, ControlCharactersInPathsAreRefusedNamingTheKey) {
  for (const auto& [head, key] : kPathKeys) {
    for (const auto& [value, what] : {std::pair{"\"/var/log/a\\nb\"", "a newline at byte 10"},
                                      std::pair{"\"/var/log/a\\rb\"", "a carriage return at byte 10"},
                                      std::pair{"\"/var/log/\\tb\"", "a tab at byte 9"},
                                      std::pair{"\"/var/log/a\\u007f\"", "the control character 127 at byte 10"},
                                      std::pair{"\"/var/log/a\\u001b[0m\"", "the control character 27 at byte 10"}}) {
      ConfigError e = only_error(std::string(head) + value + "\n");
      EXPECT_EQ(e.key, key) << value;
      EXPECT_NE(e.message.find(std::string("must not contain a control character (") + what + ")"), std::string::npos)
          << key << ": " << e.message;
    }
    EXPECT_TRUE(parse_config(std::string(head) + "\"/var/lib/basild/a b-\\u00e9\"\n")) << key;
  }
  ConfigError cmd = only_error("[[reconcile.source]]\ntype = \"command\"\ncommand = [\"/usr/bin/squeue\\n\"]\n");
  EXPECT_EQ(cmd.key, "reconcile.source[0].command");
  EXPECT_NE(cmd.message.find("a newline at byte 15"), std::string::npos) << cmd.message;
}

NameLookup table_lookup() {
  static const std::map<std::string, std::uint32_t> users{{"alice", 1001}, {"slurm", 64030}};
  static const std::map<std::string, std::uint32_t> groups{{"slurm", 64030}};
  auto find = [](const std::map<std::string, std::uint32_t>& m) {
    return [&m](const std::string& name) -> std::optional<std::uint32_t> {
      auto it = m.find(name);
      if (it == m.end()) return std::nullopt;
      return it->second;
    };
  };
  return {find(users), find(groups)};
}

TEST(ConfigValuesTest, NamesResolveToIdsAndUnknownOnesAreNamed) {
  ControlConfig c;
  c.allowed_users = {{"alice", std::nullopt}, {"ghost", std::nullopt}, {"", 1000}};
  c.allowed_groups = {{"slurm", std::nullopt}, {"nogroup-x", std::nullopt}};
  c.group = Principal{"slurm", std::nullopt};
  const ControlIds ids = resolve_control_names(c, table_lookup());
  EXPECT_EQ(ids.users, (std::vector<std::uint32_t>{1001, 1000}));
  EXPECT_EQ(ids.groups, (std::vector<std::uint32_t>{64030}));
  EXPECT_EQ(ids.socket_gid, 64030u);
  EXPECT_EQ(ids.unknown_users, (std::vector<std::string>{"control.allowed_users: no such user 'ghost'"}));
  EXPECT_EQ(ids.unknown_groups, (std::vector<std::string>{"control.allowed_groups: no such group 'nogroup-x'"}));
  EXPECT_FALSE(ids.unknown_socket_group);
}

TEST(ConfigValuesTest, CheckConfigReportsAnUnknownAllowedUserAsStartDoes) {
  ConfigCheck c = check_config("[control]\nallowed_users = [\"alice\", \"ghost\"]\n", "b.conf", table_lookup());
  EXPECT_TRUE(c.ok) << c.report;  // start goes on without that user
  EXPECT_EQ(c.report.rfind("b.conf: OK\n", 0), 0u) << c.report;
  EXPECT_NE(c.report.find("  - control.allowed_users: no such user 'ghost'"), std::string::npos) << c.report;
  EXPECT_EQ(c.report.find("'alice'"), std::string::npos) << c.report;

  ConfigCheck g = check_config("[control]\ngroup = \"nogroup-x\"\n", "b.conf", table_lookup());
  EXPECT_FALSE(g.ok) << g.report;  // start stops
  EXPECT_EQ(g.report.rfind("b.conf: 1 error\nb.conf: control.group: no such group 'nogroup-x'", 0), 0u) << g.report;

  // Without a lookup (the fuzzer's form) names are not resolved.
  EXPECT_EQ(check_config("[control]\nallowed_users = [\"ghost\"]\n", "b.conf").report.find("ghost'"),
            std::string::npos);
}

TEST(ConfigValuesTest, SlurmNodeSyncKeysAreReadAndCheckedStrictly) {
  auto c = parse_config(
      "[slurm]\nnode_sync = true\nscontrol = \"/opt/slurm/bin/scontrol\"\nslurm_conf = \"/etc/slurm/test.conf\"\n"
      "node_name_format = \"cn%d\"\nmax_changes_per_cycle = 3\nreason_prefix = \"ALPS sync (basild):\"\n"
      "timeout = \"5s\"\nslurmctld_host = \"login-2.cray_x\"\n");
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_TRUE(c->slurm.node_sync);
  EXPECT_EQ(c->slurm.slurmctld_host, "login-2.cray_x");
  EXPECT_EQ(Config{}.slurm.slurmctld_host, "") << "no backup controller by default";
  EXPECT_EQ(c->slurm.scontrol, "/opt/slurm/bin/scontrol");
  EXPECT_EQ(c->slurm.slurm_conf, "/etc/slurm/test.conf");
  EXPECT_EQ(c->slurm.node_name_format, "cn%d");
  EXPECT_EQ(c->slurm.max_changes_per_cycle, 3u);
  EXPECT_EQ(c->slurm.reason_prefix, "ALPS sync (basild):");
  EXPECT_EQ(c->slurm.timeout, std::chrono::seconds(5));
  EXPECT_FALSE(Config{}.slurm.node_sync) << "off by default";

  const std::map<std::string, std::string> refused = {
      {"scontrol = \"scontrol\"", "slurm.scontrol"},
      {"slurm_conf = \"slurm.conf\"", "slurm.slurm_conf"},
      {"node_name_format = \"nid%s\"", "slurm.node_name_format"},
      {"node_name_format = \"n id%d\"", "slurm.node_name_format"},
      {"max_changes_per_cycle = 0", "slurm.max_changes_per_cycle"},
      {"reason_prefix = \"\"", "slurm.reason_prefix"},
      {"reason_prefix = \"a\\\"b\"", "slurm.reason_prefix"},
      {"reason_prefix = \"x\\ny\"", "slurm.reason_prefix"},
      {"reason_prefix = \" basild:\"", "slurm.reason_prefix"},
      {"reason_prefix = \"$(id)\"", "slurm.reason_prefix"},
      {"reason_prefix = \"" + std::string(41, 'x') + "\"", "slurm.reason_prefix"},
      {"node_sync = \"yes\"", "slurm.node_sync"},
      {"squeue = \"/usr/bin/squeue\"", "slurm.squeue"},
      {"slurmctld_host = \"login 1\"", "slurm.slurmctld_host"},
      {"slurmctld_host = \"$(id)\"", "slurm.slurmctld_host"},
      {"slurmctld_host = \"" + std::string(65, 'x') + "\"", "slurm.slurmctld_host"},
  };
  for (const auto& [line, key] : refused) EXPECT_EQ(only_error("[slurm]\n" + line + "\n").key, key) << line;
  EXPECT_NE(only_error("[slurm]\nnode_name_format = \"nid%s\"\n").message.find("%d or %0Wd"), std::string::npos);
}

// apbasil_proxy's front reads two sections of the file on every call.
TEST(ConfigSectionsTest, OnlyTheNamedSectionsAreReadAndJudged) {
  const std::string_view front[] = {"control", "apbasil"};
  const std::string text =
      "[apbasil]\ntimeout = \"7s\"\n"
      "[control]\nsocket = \"/run/b/control.sock\"\n"
      "[poll]\ninterval = \"soon\"\n"         // an error the front does not read
      "[apbsail]\npath = \"/a\"\n"            // an unknown section
      "[conduit]\nmode = \"ssh-exec\"\n";     // no host: a check across keys
  ASSERT_FALSE(parse_config(text)) << "the whole file has errors";
  auto c = parse_config_sections(text, front);
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ(c->control.socket, "/run/b/control.sock");
  EXPECT_EQ(c->apbasil.timeout, std::chrono::seconds(7));
  EXPECT_EQ(c->poll, Config().poll) << "a section not named stays at its defaults";
  EXPECT_EQ(c->conduit, Config().conduit);

  auto bad = parse_config_sections("[control]\nsocket = \"relative.sock\"\n[poll]\ninterval = \"soon\"\n", front,
                                   "/etc/basild/basild.conf");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("/etc/basild/basild.conf:2"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("control.socket"), std::string::npos) << bad.status().message();
  EXPECT_EQ(bad.status().message().find("poll.interval"), std::string::npos) << bad.status().message();

  auto syntax = parse_config_sections("[control]\nsocket = \"/run/b/control.sock\"\n[poll]\ninterval = \n", front);
  ASSERT_FALSE(syntax) << "a TOML syntax error anywhere is an error";
  EXPECT_NE(syntax.status().message().find("TOML syntax"), std::string::npos) << syntax.status().message();
}

}  // namespace
}  // namespace basild
