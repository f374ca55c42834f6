// basil-slurm.conf read strictly.
#include "slurm/hook_config.h"

#include <gtest/gtest.h>

#include "tests/support/files.h"

namespace basild::slurm {
namespace {

using namespace std::chrono_literals;

TEST(HookConfigTest, AnEmptyFileIsEveryDefault) {
  auto c = parse_hook_config("", "x.conf");
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ(c->socket, "/run/basild/control.sock");
  EXPECT_EQ(c->basild_timeout, 120s);
  EXPECT_EQ(c->confirm, ConfirmAt::kNode);
  EXPECT_FALSE(c->scontrol);  // libslurm
  EXPECT_FALSE(c->slurm_conf);
  EXPECT_EQ(c->slurm_timeout, 20s);
  EXPECT_EQ(c->node_name_rule.format(), "nid%05d");
  EXPECT_FALSE(c->log_file);
  EXPECT_TRUE(c->syslog);
}

TEST(HookConfigTest, TheShippedExampleParses) {
  const auto text = basil_test::read_file(std::string(BASIL_TEST_DATA) + "/../../conf/basil-slurm.conf");
  ASSERT_FALSE(text.empty());
  auto c = parse_hook_config(text, "conf/basil-slurm.conf");
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ(c->socket, "/run/basild/control.sock");
  EXPECT_EQ(c->slurm_conf, "/etc/slurm/slurm.conf");
  EXPECT_EQ(c->confirm, ConfirmAt::kNode);  // the container path
}

TEST(HookConfigTest, ReadsEveryKey) {
  auto c = parse_hook_config(R"(
[basild]
socket = "/tmp/b.sock"
timeout = "90s"
confirm = "controller"
[slurm]
scontrol = "/opt/slurm/bin/scontrol"
slurm_conf = "/opt/slurm/etc/slurm.conf"
timeout = 5
node_name_rule = "c%d"
[log]
file = "/var/log/basil-slurm.log"
syslog = false
)",
                             "x.conf");
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ(c->socket, "/tmp/b.sock");
  EXPECT_EQ(c->basild_timeout, 90s);
  EXPECT_EQ(c->confirm, ConfirmAt::kController);
  EXPECT_EQ(c->scontrol, "/opt/slurm/bin/scontrol");
  EXPECT_EQ(c->slurm_conf, "/opt/slurm/etc/slurm.conf");
  EXPECT_EQ(c->slurm_timeout, 5s);
  EXPECT_EQ(c->node_name_rule.name(8), "c8");
  EXPECT_EQ(c->log_file, "/var/log/basil-slurm.log");
  EXPECT_FALSE(c->syslog);
}

TEST(HookConfigTest, ConfirmTakesTheOlderBooleansAndRefusesAnythingElse) {
  auto yes = parse_hook_config("[basild]\nconfirm = true\n", "x.conf");
  ASSERT_TRUE(yes) << yes.status().message();
  EXPECT_EQ(yes->confirm, ConfirmAt::kController);
  auto no = parse_hook_config("[basild]\nconfirm = false\n", "x.conf");
  ASSERT_TRUE(no) << no.status().message();
  EXPECT_EQ(no->confirm, ConfirmAt::kNode);
  auto bad = parse_hook_config("[basild]\nconfirm = \"slurmd\"\n", "x.conf");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().message(), "x.conf:2:11: basild.confirm: must be \"node\" or \"controller\"");
}

TEST(HookConfigTest, EveryErrorIsReportedWithItsKeyAndLine) {
  auto c = parse_hook_config(R"([slurm]
scontrol = "scontrol"
node_name_rule = "nid%05x"
timeout = "0s"
colour = "blue"
[basilk]
socket = "/x"
[log]
syslog = "yes"
)",
                             "b.conf");
  ASSERT_FALSE(c);
  const std::string m = c.status().message();
  EXPECT_NE(m.find("b.conf:2:12: slurm.scontrol: must be an absolute path (got \"scontrol\")"), std::string::npos) << m;
  EXPECT_NE(m.find("b.conf:3:18: slurm.node_name_rule: node name rule 'nid%05x'"), std::string::npos) << m;
  EXPECT_NE(m.find("b.conf:4:11: slurm.timeout: must be a duration from 100ms to 1h"), std::string::npos) << m;
  EXPECT_NE(m.find("b.conf:5:1: slurm.colour: unknown key (known in [slurm]: scontrol, slurm_conf, timeout, "
                   "node_name_rule)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("b.conf:6:2: basilk: unknown section [basilk]"), std::string::npos) << m;
  EXPECT_NE(m.find("b.conf:9:10: log.syslog: must be true or false"), std::string::npos) << m;
}

TEST(HookConfigTest, ASyntaxErrorNamesItsPlace) {
  auto c = parse_hook_config("[basild\nsocket = 1\n", "b.conf");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.status().message().rfind("b.conf:1:", 0), 0u) << c.status().message();
}

}  // namespace
}  // namespace basild::slurm
