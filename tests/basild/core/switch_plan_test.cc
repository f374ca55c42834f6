#include "basild/core/switch_plan.h"

#include <gtest/gtest.h>

namespace basild {
namespace {

ReservationRecord record(std::uint64_t id, std::string batch, ResState state,
                         ResOrigin origin = ResOrigin::kReserved) {
  ReservationRecord r;
  r.res_id = id;
  r.batch_id = std::move(batch);
  r.state = state;
  r.origin = origin;
  return r;
}

SwitchMove out(std::uint64_t id, std::string batch) { return {id, std::move(batch), true}; }
SwitchMove in(std::uint64_t id, std::string batch) { return {id, std::move(batch), false}; }

TEST(SwitchPlanTest, ASuspendedJobsConfirmedReservationGoesOutAndARunningJobsSuspendedOneComesIn) {
  SwitchPlanInput p;
  p.active = {record(7, "107", ResState::kConfirmed), record(8, "108", ResState::kSuspended)};
  p.job_states = {{"107", "SUSPENDED"}, {"108", "RUNNING"}};
  const std::vector<SwitchMove> want = {out(7, "107"), in(8, "108")};
  EXPECT_EQ(plan_switches(p), want);
}

TEST(SwitchPlanTest, EveryOutComesBeforeEveryInSoThatAGangTurnFreesTheProcessorsFirst) {
  SwitchPlanInput p;
  p.active = {record(3, "103", ResState::kSuspended), record(9, "109", ResState::kConfirmed),
              record(5, "105", ResState::kConfirmed)};
  p.job_states = {{"103", "RUNNING"}, {"109", "SUSPENDED"}, {"105", "SUSPENDED"}};
  const std::vector<SwitchMove> want = {out(5, "105"), out(9, "109"), in(3, "103")};
  EXPECT_EQ(plan_switches(p), want);
}

TEST(SwitchPlanTest, AReservationAlreadyWhereItsJobIsMovesNothing) {
  SwitchPlanInput p;
  p.active = {record(7, "107", ResState::kConfirmed), record(8, "108", ResState::kSuspended)};
  p.job_states = {{"107", "RUNNING"}, {"108", "SUSPENDED"}};
  p.switched_out = {8};
  EXPECT_TRUE(plan_switches(p).empty());
}

TEST(SwitchPlanTest, ASuspendedRecordNotSeenSwitchedOutSinceTheStartIsSwitchedOutAgain) {
  // basild stopped between marking it suspended and ALPS's answer.
  SwitchPlanInput p;
  p.active = {record(8, "108", ResState::kSuspended)};
  p.job_states = {{"108", "SUSPENDED"}};
  const std::vector<SwitchMove> want = {out(8, "108")};
  EXPECT_EQ(plan_switches(p), want);
}

TEST(SwitchPlanTest, AReservationALPSRefusedToSwitchIsNotSwitchedAgainButItsJobIsResumedAgain) {
  SwitchPlanInput p;
  p.active = {record(7, "107", ResState::kConfirmed), record(8, "108", ResState::kSuspended)};
  p.job_states = {{"107", "RUNNING"}, {"108", "RUNNING"}};
  p.refused = {7, 8};
  EXPECT_TRUE(plan_switches(p).empty()) << "8's job is being requeued";
  p.job_states["107"] = "SUSPENDED";  // gang scheduling's next slice
  const std::vector<SwitchMove> want = {{7, "107", true, true}};
  EXPECT_EQ(plan_switches(p), want);
}

TEST(SwitchPlanTest, OnlyAJobsOwnConfirmedOrSuspendedReservationMoves) {
  SwitchPlanInput p;
  p.active = {record(1, "101", ResState::kConfirmed, ResOrigin::kSeen),  // someone else's
              record(2, "", ResState::kConfirmed),                        // no batch id
              record(3, "103", ResState::kReserved),                      // not confirmed yet
              record(4, "104", ResState::kReleasing),                     // being released
              record(5, "105", ResState::kOrphan),
              record(6, "106", ResState::kConfirmed, ResOrigin::kAdopted)};
  for (const char* id : {"101", "", "103", "104", "105", "106"}) p.job_states[id] = "SUSPENDED";
  const std::vector<SwitchMove> want = {out(6, "106")};
  EXPECT_EQ(plan_switches(p), want);
}

TEST(SwitchPlanTest, AJobInAnyOtherStateOrNotListedMovesNothing) {
  SwitchPlanInput p;
  p.active = {record(7, "107", ResState::kSuspended), record(8, "108", ResState::kSuspended),
              record(9, "109", ResState::kConfirmed)};
  p.job_states = {{"107", "COMPLETING"}, {"109", "PENDING"}};  // 108 not listed
  EXPECT_TRUE(plan_switches(p).empty());
  EXPECT_TRUE(moves_a_reservation("SUSPENDED"));
  EXPECT_TRUE(moves_a_reservation("RUNNING"));
  EXPECT_FALSE(moves_a_reservation("PREEMPTED"));
  EXPECT_FALSE(moves_a_reservation(""));
}

}  // namespace
}  // namespace basild
