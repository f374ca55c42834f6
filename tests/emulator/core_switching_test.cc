// SWITCH in the emulator's core (core/switching.h): ALPS's preconditions
// and refusals, a switch that takes its time with STATUS saying so, the
// EMPTY-too-early fault, and a switched-out reservation's nodes shared with
// another reservation within the co-residency limit. Pure: no store.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "emulator/core/switching.h"
#include "tests/emulator/core_support.h"

namespace emu {
namespace {

constexpr std::uint64_t kT = 5'000'000;  // ms: the requests' clock, seconds kT / 1000

basil::Response at(State& s, const basil::Request& req, std::uint64_t now_ms) {
  Handled h = handle(req, s, now_ms / 1000, now_ms);
  apply(s, h.delta);
  return h.response;
}

// A SHARED reservation for `batch` of every processor of `nodes` nodes
// (16 cores x 2 threads on tds-8), 512 MB a PE: a quarter of a node's
// 64 GiB, so that the memory of two fits (ALPS keeps a switched-out
// reservation's memory).
basil::ReserveRequest shared_req(std::uint64_t nodes) {
  basil::ReserveRequest r = reserve_req(nodes * 32, 32);
  r.params[0].reservation_mode = basil::ReservationMode::kShared;
  basil::MemoryParam m;
  m.size_mb = 512;
  r.params[0].memory.push_back(m);
  return r;
}

std::uint64_t reserve_shared(State& s, std::uint64_t nodes, const std::string& batch, std::uint64_t now_ms = kT) {
  basil::ReserveRequest r = shared_req(nodes);
  r.batch_id = batch;
  const auto resp = at(s, request("1.3", r), now_ms);
  EXPECT_TRUE(resp.ok()) << message(resp);
  return resp.ok() ? std::get<basil::Reserved>(resp.body).reservation_id : 0;
}

basil::Response switch_one(State& s, std::uint64_t resid, basil::SwitchAction a, std::uint64_t now_ms) {
  basil::SwitchRequest sw;
  sw.reservations.push_back({resid, a});
  return at(s, request("1.3", sw), now_ms);
}

basil::ItemStatus status_at(State& s, std::uint64_t resid, std::uint64_t now_ms) {
  basil::StatusQuery q;
  q.reservation_ids = {resid};
  return std::get<basil::StatusInfo>(at(s, request("1.3", q), now_ms).body).reservations.at(0).status;
}

void claim(State& s, std::uint64_t resid) {
  basil::ConfirmRequest confirm;
  confirm.reservation_id = resid;
  confirm.pagg_id = 77;
  ASSERT_TRUE(at(s, request("1.3", confirm), kT).ok());
  AppStart app;
  app.reservation_id = resid;
  auto d = start_application(s, app, kT / 1000);
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  apply(s, *d);
}

TEST(SwitchingTest, ASwitchOutTakesItsTimeWithStatusSwitchThenSuspendAndBackIn) {
  State s = world("tds-8");
  s.system.switching.switch_ms = 800;
  const auto r = reserve_shared(s, 2, "1");
  claim(s, r);
  EXPECT_EQ(status_at(s, r, kT), basil::ItemStatus::kRun);
  ASSERT_TRUE(switch_one(s, r, basil::SwitchAction::kOut, kT).ok());
  EXPECT_EQ(status_at(s, r, kT + 799), basil::ItemStatus::kSwitch);
  EXPECT_EQ(status_at(s, r, kT + 800), basil::ItemStatus::kSuspend);
  // Another SWITCH while one is under way: TRANSIENT, nothing changes.
  const auto early = switch_one(s, r, basil::SwitchAction::kIn, kT + 100);
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error_class, basil::ErrorClass::kTransient);
  EXPECT_NE(message(early).find("previous switch has not completed"), std::string::npos) << message(early);
  EXPECT_TRUE(s.reservations.at(r).suspended);
  // The same SWITCH again once settled (its answer was lost): SUCCESS, no new switch.
  ASSERT_TRUE(switch_one(s, r, basil::SwitchAction::kOut, kT + 900).ok());
  EXPECT_EQ(status_at(s, r, kT + 901), basil::ItemStatus::kSuspend);
  ASSERT_TRUE(switch_one(s, r, basil::SwitchAction::kIn, kT + 1000).ok());
  EXPECT_EQ(status_at(s, r, kT + 1000), basil::ItemStatus::kSwitch);
  EXPECT_EQ(status_at(s, r, kT + 1800), basil::ItemStatus::kRun);
}

TEST(SwitchingTest, TheEmptyTooEarlyFaultSaysEmptyDuringASwitchOutOfAReservationWithAClaim) {
  State s = world("tds-8");
  s.system.switching.switch_ms = 1000;
  s.system.switching.empty_early = true;
  const auto r = reserve_shared(s, 1, "1");
  claim(s, r);
  ASSERT_TRUE(switch_one(s, r, basil::SwitchAction::kOut, kT).ok());
  EXPECT_EQ(status_at(s, r, kT + 10), basil::ItemStatus::kEmpty) << "ALPS's early EMPTY";
  EXPECT_EQ(status_at(s, r, kT + 1000), basil::ItemStatus::kSuspend) << "the claim is there all along";
  ASSERT_TRUE(switch_one(s, r, basil::SwitchAction::kIn, kT + 2000).ok());
  EXPECT_EQ(status_at(s, r, kT + 2010), basil::ItemStatus::kSwitch) << "a SWITCH IN is not affected";
}

TEST(SwitchingTest, AnExclusiveReservationOrADisabledSuspendResumeIsRefusedPermanentAndNothingSwitches) {
  State s = world("tds-8");
  ASSERT_TRUE(at(s, request("1.3", reserve_req(32, 32)), kT).ok());  // EXCLUSIVE by default
  const auto shared = reserve_shared(s, 1, "2");
  basil::SwitchRequest both;
  both.reservations.push_back({shared, basil::SwitchAction::kOut});
  both.reservations.push_back({1, basil::SwitchAction::kOut});
  const auto refused = at(s, request("1.3", both), kT);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error_class, basil::ErrorClass::kPermanent);
  EXPECT_EQ(message(refused), "ALPS error: apsched: at least resid 1 is exclusive");
  EXPECT_FALSE(s.reservations.at(shared).suspended) << "a refused SWITCH switches nothing";

  s.system.switching.enabled = false;
  const auto off = switch_one(s, shared, basil::SwitchAction::kOut, kT);
  ASSERT_FALSE(off.ok());
  EXPECT_EQ(off.error_class, basil::ErrorClass::kPermanent);
  EXPECT_EQ(message(off), kSwitchDisabled);
}

TEST(SwitchingTest, ASwitchedOutReservationsNodesTakeOneMoreSharedReservationAndItSwitchesInOnlyWhenTheyAreFree) {
  State s = world("tds-8");
  s.system.switching.switch_ms = 0;
  // Eight nodes: A holds all of them.
  const auto a = reserve_shared(s, 8, "A");
  ASSERT_NE(a, 0u);
  const auto busy = at(s, request("1.3", shared_req(1)), kT);
  ASSERT_FALSE(busy.ok()) << "A switched in holds every processor";
  EXPECT_EQ(busy.error_class, basil::ErrorClass::kTransient);

  ASSERT_TRUE(switch_one(s, a, basil::SwitchAction::kOut, kT).ok());
  const auto b = reserve_shared(s, 8, "B");
  ASSERT_NE(b, 0u) << "A's processors are free while it is out";
  // An EXCLUSIVE reservation never shares a node; a third SHARED one is
  // past the co-residency limit (2) while A is out.
  EXPECT_FALSE(at(s, request("1.3", reserve_req(32, 32)), kT).ok());
  EXPECT_FALSE(at(s, request("1.3", shared_req(1)), kT).ok());

  const auto in_a = switch_one(s, a, basil::SwitchAction::kIn, kT);
  ASSERT_FALSE(in_a.ok()) << "B holds A's processors";
  EXPECT_EQ(in_a.error_class, basil::ErrorClass::kTransient);
  EXPECT_NE(message(in_a).find("held by resId " + std::to_string(b)), std::string::npos) << message(in_a);
  // Gang scheduling's turn: B out, A in.
  ASSERT_TRUE(switch_one(s, b, basil::SwitchAction::kOut, kT).ok());
  ASSERT_TRUE(switch_one(s, a, basil::SwitchAction::kIn, kT).ok());
  EXPECT_FALSE(s.reservations.at(a).suspended);
  EXPECT_TRUE(s.reservations.at(b).suspended);
}

TEST(SwitchingTest, AStatusOfAnApplicationFollowsItsReservation) {
  State s = world("tds-8");
  s.system.switching.switch_ms = 500;
  const auto r = reserve_shared(s, 1, "1");
  claim(s, r);
  const std::uint64_t apid = s.applications.rbegin()->first;
  basil::StatusQuery q;
  q.application_ids = {apid, 999999};
  auto st = std::get<basil::StatusInfo>(at(s, request("1.3", q), kT).body);
  EXPECT_EQ(st.applications.at(0).status, basil::ItemStatus::kRun);
  EXPECT_EQ(st.applications.at(1).status, basil::ItemStatus::kInvalid);
  ASSERT_TRUE(switch_one(s, r, basil::SwitchAction::kOut, kT).ok());
  st = std::get<basil::StatusInfo>(at(s, request("1.3", q), kT + 1).body);
  EXPECT_EQ(st.applications.at(0).status, basil::ItemStatus::kSwitch);
  st = std::get<basil::StatusInfo>(at(s, request("1.3", q), kT + 500).body);
  EXPECT_EQ(st.applications.at(0).status, basil::ItemStatus::kSuspend);
}

}  // namespace
}  // namespace emu
