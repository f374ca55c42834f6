// The scontrol node-control adapter against a stand-in scontrol (a script
// that records its argv, NUL-separated, and its SLURM_CONF, and prints what
// the test gives): the exact arguments, a hostile reason arriving as one
// argument, SLURM_CONF, failures and the timeout.
#include "basild/io/scontrol.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/basild/io/emulator_support.h"
#include "tests/support/files.h"

namespace basild {
namespace {

using namespace std::chrono_literals;

class ScontrolTest : public ::testing::Test {
 protected:
  // A stand-in scontrol: records, then runs `then` (a shell fragment).
  void make(const std::string& then, std::chrono::milliseconds timeout = 5s, std::string slurm_conf = "") {
    dir_ = testing::make_temp_dir("scontrol");
    const std::string script = dir_ + "/scontrol";
    basil_test::write_file(script, "#!/bin/sh\nprintf '%s\\0' \"$@\" > " + dir_ + "/argv\nprintf '%s' \"${SLURM_CONF-unset}\" > " +
                                       dir_ + "/slurm_conf\n" + then + "\n");
    ::chmod(script.c_str(), 0755);
    ScontrolOptions o;
    o.scontrol = script;
    o.slurm_conf = std::move(slurm_conf);
    o.timeout = timeout;
    control_ = std::make_unique<ScontrolNodeControl>(io_, o);
  }

  std::vector<std::string> argv() const {
    const std::string raw = basil_test::read_file(dir_ + "/argv");
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t nul = raw.find('\0'); nul != std::string::npos; nul = raw.find('\0', start)) {
      out.push_back(raw.substr(start, nul - start));
      start = nul + 1;
    }
    return out;
  }
  std::string slurm_conf() const { return basil_test::read_file(dir_ + "/slurm_conf"); }

  basil::Status status_of(const std::function<void(NodeControlPort::Done)>& call) {
    std::optional<basil::Status> out;
    call([&](basil::Status s) { out = std::move(s); });
    io_.restart();
    io_.run();
    return out.value_or(basil::Status(basil::Code::kInternal, "never answered"));
  }

  basil::Result<std::vector<SlurmNode>> list(std::optional<std::string> name = std::nullopt) {
    std::optional<basil::Result<std::vector<SlurmNode>>> out;
    control_->list(std::move(name), [&](basil::Result<std::vector<SlurmNode>> r) { out.emplace(std::move(r)); });
    io_.restart();
    io_.run();
    return out.value_or(basil::Status(basil::Code::kInternal, "never answered"));
  }

  boost::asio::io_context io_;
  std::string dir_;
  std::unique_ptr<ScontrolNodeControl> control_;
};

TEST_F(ScontrolTest, ListRunsShowNodeOneLinerAndReadsItsOutput) {
  make("echo 'NodeName=nid00008 Arch=x86_64 State=IDLE+DRAIN Reason=basild: ALPS has nid 8 state DOWN "
       "[root@2026-01-01T00:00:00]'; echo 'NodeName=nid00009 State=IDLE'");
  auto nodes = list();
  ASSERT_TRUE(nodes) << nodes.status().to_string();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_TRUE((*nodes)[0].drain);
  EXPECT_EQ((*nodes)[0].reason, "basild: ALPS has nid 8 state DOWN");
  EXPECT_EQ(argv(), (std::vector<std::string>{"--all", "-o", "show", "node"}));
  ASSERT_TRUE(list("nid00009"));
  EXPECT_EQ(argv(), (std::vector<std::string>{"--all", "-o", "show", "node", "nid00009"}));
}

TEST_F(ScontrolTest, AHostileReasonArrivesAsOneArgumentAsItIs) {
  make("exit 0");
  const std::string reason = "basild: x\" 'y' $(touch /tmp/pwned) `id`; rm -rf / \\\nState=RESUME\tz";
  ASSERT_TRUE(status_of([&](auto done) { control_->drain("nid00008", reason, done); }));
  EXPECT_EQ(argv(), (std::vector<std::string>{"update", "NodeName=nid00008", "State=DRAIN", "Reason=" + reason}));
  ASSERT_TRUE(status_of([&](auto done) { control_->resume("nid00008", done); }));
  EXPECT_EQ(argv(), (std::vector<std::string>{"update", "NodeName=nid00008", "State=RESUME"}));
}

TEST_F(ScontrolTest, SlurmConfIsSetForScontrolWhenConfiguredElseBasildsOwnIsKept) {
  ::setenv("SLURM_CONF", "/etc/slurm/basilds-own.conf", 1);
  make("exit 0", 5s, "/etc/slurm/cluster.conf");
  ASSERT_TRUE(status_of([&](auto done) { control_->resume("nid00008", done); }));
  EXPECT_EQ(slurm_conf(), "/etc/slurm/cluster.conf");
  make("exit 0");
  ASSERT_TRUE(status_of([&](auto done) { control_->resume("nid00008", done); }));
  EXPECT_EQ(slurm_conf(), "/etc/slurm/basilds-own.conf");
  ::unsetenv("SLURM_CONF");
}

TEST_F(ScontrolTest, AFailingScontrolIsAnErrorWithItsExitStatusAndStderr) {
  make("echo 'slurm_update error: Invalid node name specified' >&2; exit 1");
  auto s = status_of([&](auto done) { control_->drain("nid00099", "r", done); });
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("exit status 1"), std::string::npos) << s.to_string();
  EXPECT_NE(s.message().find("Invalid node name specified"), std::string::npos) << s.to_string();
  EXPECT_FALSE(list());
}

TEST_F(ScontrolTest, AHungScontrolIsKilledAtTheTimeout) {
  make("sleep 30", 300ms);
  const auto t0 = std::chrono::steady_clock::now();
  auto nodes = list();
  ASSERT_FALSE(nodes);
  EXPECT_EQ(nodes.status().code(), basil::Code::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST_F(ScontrolTest, AMissingScontrolIsAnErrorNamingIt) {
  ScontrolOptions o;
  o.scontrol = "/nonexistent/scontrol";
  control_ = std::make_unique<ScontrolNodeControl>(io_, o);
  auto s = status_of([&](auto done) { control_->resume("nid00008", done); });
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("cannot start scontrol '/nonexistent/scontrol'"), std::string::npos) << s.to_string();
}

}  // namespace
}  // namespace basild
