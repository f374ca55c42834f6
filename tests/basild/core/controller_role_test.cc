// Which basild acts for the cluster with a backup slurmctld
// (basild/core/controller_role.h), from scontrol ping's words.
#include "basild/core/controller_role.h"

#include <gtest/gtest.h>

namespace basild {
namespace {

constexpr const char* kBothUp =
    "Slurmctld(primary) at login1 is UP\n"
    "Slurmctld(backup) at login2 is UP\n";
constexpr const char* kPrimaryDown =
    "Slurmctld(primary) at login1 is DOWN\n"
    "Slurmctld(backup) at login2 is UP\n"
    "*****************************************\n"
    "** RESTORE SLURMCTLD DAEMON TO SERVICE **\n"
    "*****************************************\n";

TEST(ControllerRoleTest, ScontrolPingIsReadAsItsControllersInOrderAndTheBannerIsSkipped) {
  auto pings = parse_scontrol_ping(kPrimaryDown);
  ASSERT_TRUE(pings) << pings.status().message();
  EXPECT_EQ(*pings, (std::vector<ControllerPing>{{"primary", "login1", false}, {"backup", "login2", true}}));
  auto three = parse_scontrol_ping(
      "Slurmctld(primary) at a is DOWN\nSlurmctld(backup1) at b is DOWN\nSlurmctld(backup2) at c.x-y is UP\n");
  ASSERT_TRUE(three);
  ASSERT_EQ(three->size(), 3u);
  EXPECT_EQ((*three)[2], (ControllerPing{"backup2", "c.x-y", true}));
}

TEST(ControllerRoleTest, OutputThatIsNotScontrolPingsIsAnError) {
  EXPECT_FALSE(parse_scontrol_ping(""));
  EXPECT_FALSE(parse_scontrol_ping("slurm_load_ctl_conf error: Unable to contact slurm controller\n"));
  EXPECT_FALSE(parse_scontrol_ping("Slurmctld(primary) at login1 is MAYBE\n"));
  EXPECT_FALSE(parse_scontrol_ping("Slurmctld(primary) at  is UP\n"));
}

TEST(ControllerRoleTest, TheFirstControllerUpIsInChargeSoAReturningPrimaryTakesBackItsRole) {
  EXPECT_EQ(controller_role(std::string(kBothUp), "login1").role, ControllerRole::kInCharge);
  const auto backup = controller_role(std::string(kBothUp), "login2");
  EXPECT_EQ(backup.role, ControllerRole::kStandby);
  EXPECT_EQ(backup.in_charge, "login1");
  EXPECT_EQ(controller_role(std::string(kPrimaryDown), "login2").role, ControllerRole::kInCharge);
  const auto primary = controller_role(std::string(kPrimaryDown), "login1");
  EXPECT_EQ(primary.role, ControllerRole::kStandby);
  EXPECT_EQ(primary.in_charge, "login2");
}

TEST(ControllerRoleTest, WithoutABackupConfiguredBasildIsAlwaysInChargeAndSlurmIsNotNeeded) {
  const auto v = controller_role(basil::Status(basil::Code::kTransport, "no scontrol"), "");
  EXPECT_EQ(v.role, ControllerRole::kInCharge);
  EXPECT_TRUE(acts_for_cluster(v.role));
}

TEST(ControllerRoleTest, WhateverSlurmCannotTellIsUnknownAndUnknownDoesNotActForTheCluster) {
  const auto failed = controller_role(basil::Status(basil::Code::kTimeout, "scontrol timed out"), "login1");
  EXPECT_EQ(failed.role, ControllerRole::kUnknown);
  EXPECT_NE(failed.reason.find("scontrol timed out"), std::string::npos);
  const auto none = controller_role(std::string("Slurmctld(primary) at login1 is DOWN\n"
                                                "Slurmctld(backup) at login2 is DOWN\n"),
                                    "login1");
  EXPECT_EQ(none.role, ControllerRole::kUnknown);
  EXPECT_NE(none.reason.find("no slurmctld answers"), std::string::npos);
  const auto stranger = controller_role(std::string(kBothUp), "login3");
  EXPECT_EQ(stranger.role, ControllerRole::kUnknown);
  EXPECT_NE(stranger.reason.find("login1, login2"), std::string::npos);
  for (const auto& v : {failed, none, stranger}) EXPECT_FALSE(acts_for_cluster(v.role));
  EXPECT_FALSE(acts_for_cluster(ControllerRole::kStandby));
}

TEST(ControllerRoleTest, RolesHaveTheirWords) {
  EXPECT_EQ(controller_role_name(ControllerRole::kInCharge), "in-charge");
  EXPECT_EQ(controller_role_name(ControllerRole::kStandby), "standby");
  EXPECT_EQ(controller_role_name(ControllerRole::kUnknown), "unknown");
}

}  // namespace
}  // namespace basild
