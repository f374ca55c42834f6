// basil-slurm --check-config's checks over fake ports, and the rule that
// finds the configuration by the program's name.
#include "slurm/setup_check.h"

#include <gtest/gtest.h>

#include <set>

namespace basild::slurm {
namespace {

SetupPorts all_good() {
  SetupPorts p;
  p.cannot_append = [](const std::string&) { return std::string(); };
  p.cannot_run = [](const std::string&) { return std::string(); };
  p.cannot_read = [](const std::string&) { return std::string(); };
  p.basild_health = [] { return Reply{true, {}, 200, "{}"}; };
  return p;
}

TEST(SetupCheckTest, EveryCheckHoldsOnAGoodSetUpAndEachFailureNamesTheUserAndTheFix) {
  HookConfig c;
  c.log_file = "/var/log/slurm/basil-slurm.log";
  c.scontrol = "/usr/bin/scontrol";
  c.slurm_conf = "/etc/slurm/slurm.conf";
  auto lines = check_setup(c, all_good(), "slurm (uid 64030)");
  ASSERT_EQ(lines.size(), 4u);
  for (const auto& l : lines) EXPECT_TRUE(l.ok) << l.text;

  SetupPorts bad = all_good();
  bad.cannot_append = [](const std::string&) { return std::string("Permission denied"); };
  bad.basild_health = [] { return Reply{true, {}, 403, "{}"}; };
  bad.cannot_run = [](const std::string&) { return std::string("No such file or directory"); };
  lines = check_setup(c, bad, "slurm (uid 64030)");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_FALSE(lines[0].ok);
  EXPECT_NE(lines[0].text.find("slurm (uid 64030) cannot append to it (Permission denied)"), std::string::npos)
      << lines[0].text;
  EXPECT_FALSE(lines[1].ok);
  EXPECT_NE(lines[1].text.find("allowed_users"), std::string::npos) << lines[1].text;
  EXPECT_FALSE(lines[2].ok);
  EXPECT_TRUE(lines[3].ok);
}

TEST(SetupCheckTest, ALogOnlyToStderrAndAnUnreachableBasildFail) {
  HookConfig c;
  c.syslog = false;
  SetupPorts p = all_good();
  p.basild_health = [] { return Reply{false, "control socket /run/basild/control.sock does not exist", 0, {}}; };
  const auto lines = check_setup(c, p, "root (uid 0)");
  ASSERT_EQ(lines.size(), 2u) << "no scontrol and no slurm.conf named: not checked";
  EXPECT_FALSE(lines[0].ok);
  EXPECT_NE(lines[0].text.find("Slurm discards"), std::string::npos) << lines[0].text;
  EXPECT_FALSE(lines[1].ok);
  EXPECT_NE(lines[1].text.find("does not exist"), std::string::npos) << lines[1].text;
  c.syslog = true;
  EXPECT_TRUE(check_setup(c, p, "root (uid 0)")[0].ok);
}

TEST(ConfigPathTest, TheProgramsNameChoosesItsFileBesideItOrInEtcBasild) {
  const std::set<std::string> files = {"/opt/site/bin/basil-slurm-c2.conf"};
  const auto exists = [&](const std::string& p) { return files.count(p) > 0; };
  EXPECT_EQ(config_path_for("/usr/sbin/basil-slurm", exists), "/etc/basild/basil-slurm.conf");
  EXPECT_EQ(config_path_for("basil-slurm", exists), "/etc/basild/basil-slurm.conf");
  EXPECT_EQ(config_path_for("", exists), "/etc/basild/basil-slurm.conf");
  EXPECT_EQ(config_path_for("/usr/sbin/basil-slurm-login2", exists), "/etc/basild/basil-slurm-login2.conf");
  EXPECT_EQ(config_path_for("/opt/site/bin/basil-slurm-c2", exists), "/opt/site/bin/basil-slurm-c2.conf");
  EXPECT_EQ(config_path_for("/opt/site/bin/basil-slurm", exists), "/etc/basild/basil-slurm.conf");
}

}  // namespace
}  // namespace basild::slurm
