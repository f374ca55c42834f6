// The pure parts of aprun, apkill's daemon and apstat: aprun's words and
// reservation, the outcome it reports, apstat's tables.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include "emulator/apsched/apstat.h"
#include "emulator/apsched/clients.h"
#include "emulator/apsched/outcome.h"
#include "emulator/core/claim.h"
#include "tests/emulator/core_support.h"

namespace emu::apsched {
namespace {

int exited(int code) { return code << 8; }
int killed(int sig) { return sig; }

TEST(AprunArgsTest, PlacementOptionsInBothFormsThenTheCommand) {
  auto a = parse_aprun_args({"-n", "4", "-N2", "-d", "3", "-j1", "./a.out", "-n", "9"});
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  EXPECT_EQ(a->shape, (Shape{4, 2, 3, 1}));
  EXPECT_EQ(a->command, (std::vector<std::string>{"./a.out", "-n", "9"}));
  auto dashes = parse_aprun_args({"--", "-weird-name"});
  ASSERT_TRUE(dashes.is_ok());
  EXPECT_EQ(dashes->shape, Shape{});
  EXPECT_EQ(dashes->command, (std::vector<std::string>{"-weird-name"}));
}

TEST(AprunArgsTest, BadWordsAreRefusedWithASentence) {
  const auto first_line = [](const std::vector<std::string>& words) {
    const std::string m = parse_aprun_args(words).status().message();
    return m.substr(0, m.find('\n'));
  };
  EXPECT_EQ(first_line({"-n", "0", "x"}), "aprun: -n takes a positive number, not '0'");
  EXPECT_EQ(first_line({"-d", "-1", "x"}), "aprun: -d takes a positive number, not '-1'");
  EXPECT_EQ(first_line({"-x", "x"}), "aprun: unknown option -x");
  EXPECT_EQ(first_line({"-n"}), "aprun: -n needs a value");
  EXPECT_EQ(first_line({"-n", "2"}), "aprun: no command to run");
  EXPECT_TRUE(parse_aprun_args({"-N", "0", "x"}).is_ok()) << "-N 0: as many as fit";
}

TEST(AprunArgsTest, TheReservationComesFromBasilReservationIdElseBatchPartitionId) {
  EXPECT_EQ(*reservation_from("7", "8"), 7u);
  EXPECT_EQ(*reservation_from(nullptr, "8"), 8u);
  EXPECT_EQ(*reservation_from("", "8"), 8u);
  EXPECT_EQ(reservation_from(nullptr, nullptr).status().message(),
            "aprun: no reservation: neither BASIL_RESERVATION_ID nor BATCH_PARTITION_ID is set");
  EXPECT_EQ(reservation_from("x7", nullptr).status().message(),
            "aprun: BASIL_RESERVATION_ID 'x7' is not a reservation id");
  EXPECT_EQ(reservation_from(nullptr, "0").status().message(), "aprun: BATCH_PARTITION_ID '0' is not a reservation id");
}

TEST(OutcomeTest, ASignalWinsOverExitCodesAndEachIsNamedOnce) {
  EXPECT_EQ(outcome(1, {exited(0), exited(0)}).status, 0);
  EXPECT_EQ(outcome(1, {exited(0), exited(0)}).line, "");
  const Outcome codes = outcome(100001, {exited(0), exited(3), exited(1), exited(3)});
  EXPECT_EQ(codes.status, 3);
  EXPECT_EQ(codes.line, "Application 100001 exit codes: 3 1\n");
  const Outcome mixed = outcome(100002, {exited(2), killed(SIGKILL), killed(SIGTERM), killed(SIGKILL)});
  EXPECT_EQ(mixed.status, 128 + SIGKILL);
  EXPECT_EQ(mixed.line,
            "Application 100002 exit codes: 2\nApplication 100002 exit signals: Killed, Terminated\n");
}

TEST(ApstatTest, ApplicationsAreListedWithTheirReservationUserAndStartTime) {
  State s = world("tds-8");
  ASSERT_TRUE(run(s, request("1.3", reserve_req(64))).ok());
  ASSERT_TRUE(run(s, request("1.3", basil::ConfirmRequest{1, 77, {}})).ok());
  std::uint64_t apid = 0;
  auto d = claim(s, Claim{1, Shape{8, 0, 1, 0}, 77, "session", 1000, 100, "a.out"}, 1796212800, &apid);
  ASSERT_TRUE(d.is_ok());
  apply(s, *d);
  EXPECT_EQ(format_applications(s, false),
            "Total placed applications: 1\n"
            "     Apid  ResId       User   PEs State Start (UTC)          Command\n"
            "   100002      1      alice     8 run   2026-12-02 12:00:00  a.out\n");
  EXPECT_NE(format_applications(s, true).find("Ap[0]: apid 100002, resId 1, uid 1000, gid 100, width 8, depth 1"),
            std::string::npos);
  EXPECT_NE(format_reservations(s, false).find("A      1   100001 batch:42"), std::string::npos)
      << format_reservations(s, false);
  EXPECT_NE(format_reservations(s, false).find(" conf,claim\n"), std::string::npos);
}

}  // namespace
}  // namespace emu::apsched
