#include "basild/control/admission.h"

#include <gtest/gtest.h>

#include "basild/control/server.h"

namespace basild::control {
namespace {

constexpr std::uint32_t kSelf = 500;
const PeerCredentials kRoot{1, 0, 0};
const PeerCredentials kBasild{1, kSelf, kSelf};
const PeerCredentials kSlurm{1, 450, 450};
const PeerCredentials kOther{1, 451, 451};

ServerOptions options() {
  ServerOptions o;
  o.allowed_uids = {450, 451};
  o.max_connections = 100;
  o.max_connections_per_uid = 10;
  o.reserved_connections = 8;
  return o;
}

TEST(AdmissionTest, PeerNotOnTheAllowListOrWithoutCredentialsIsForbidden) {
  const auto o = options();
  EXPECT_EQ(admit(o, nullptr, kSelf, {}), Admission::kForbidden);
  const PeerCredentials stranger{1, 999, 999};
  EXPECT_EQ(admit(o, &stranger, kSelf, {}), Admission::kForbidden);
}

TEST(AdmissionTest, AnAllowedUidGetsAtMostMaxConnectionsPerUid) {
  const auto o = options();
  EXPECT_EQ(admit(o, &kSlurm, kSelf, {.total = 9, .of_uid = 9}), Admission::kAdmit);
  EXPECT_EQ(admit(o, &kSlurm, kSelf, {.total = 10, .of_uid = 10}), Admission::kBusyUid);
  // Another allowed uid is not held back by the first one's connections.
  EXPECT_EQ(admit(o, &kOther, kSelf, {.total = 10, .of_uid = 0}), Admission::kAdmit);
}

TEST(AdmissionTest, TheLastSlotsAreKeptForRootAndBasildsOwnUid) {
  const auto o = options();
  // 92 open: the 8 left are root's and basild's.
  EXPECT_EQ(admit(o, &kOther, kSelf, {.total = 91, .of_uid = 0}), Admission::kAdmit);
  EXPECT_EQ(admit(o, &kOther, kSelf, {.total = 92, .of_uid = 0}), Admission::kBusy);
  EXPECT_EQ(admit(o, &kRoot, kSelf, {.total = 92, .of_uid = 0}), Admission::kAdmit);
  EXPECT_EQ(admit(o, &kBasild, kSelf, {.total = 99, .of_uid = 50}), Admission::kAdmit);
  // None beyond max_connections, for anyone.
  EXPECT_EQ(admit(o, &kRoot, kSelf, {.total = 100, .of_uid = 0}), Admission::kBusy);
}

TEST(AdmissionTest, RootAndBasildsOwnUidHaveNoPerUidLimit) {
  const auto o = options();
  EXPECT_EQ(admit(o, &kRoot, kSelf, {.total = 50, .of_uid = 50}), Admission::kAdmit);
  EXPECT_EQ(admit(o, &kBasild, kSelf, {.total = 50, .of_uid = 50}), Admission::kAdmit);
}

TEST(AdmissionTest, ReservedSlotsAreAtMostAQuarterOfMaxConnections) {
  auto o = options();
  o.max_connections = 12;
  EXPECT_EQ(reserved_slots(o), 3u);
  EXPECT_EQ(admit(o, &kOther, kSelf, {.total = 8, .of_uid = 8}), Admission::kAdmit);
  EXPECT_EQ(admit(o, &kOther, kSelf, {.total = 9, .of_uid = 0}), Admission::kBusy);
  o.max_connections = 1;
  EXPECT_EQ(reserved_slots(o), 0u);
  EXPECT_EQ(admit(o, &kOther, kSelf, {.total = 0, .of_uid = 0}), Admission::kAdmit);
}

}  // namespace
}  // namespace basild::control
