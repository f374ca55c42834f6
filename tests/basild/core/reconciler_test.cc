#include "basild/core/reconciler.h"
#include "basild/core/job_table.h"

#include <gtest/gtest.h>

#include <random>

namespace basild {
namespace {

using namespace std::chrono_literals;
using ReconcileKind = ReconcileAction::Kind;

ReconcileSettings settings() {
  ReconcileSettings s;
  s.grace = 60s;
  s.consecutive = 3;
  s.max_releases_per_cycle = 10;
  s.max_release_share = 0.25;
  s.release_share_floor = 2;
  s.claims_timeout = 120s;
  return s;
}

AlpsReservation res(std::uint64_t id, std::optional<std::string> batch, std::vector<std::uint64_t> apids = {}) {
  AlpsReservation a;
  a.id = id;
  a.batch_id = std::move(batch);
  a.user = "alice";
  a.nodes = basil::NidList::from_nids({static_cast<std::uint32_t>(id)});
  a.apids = std::move(apids);
  return a;
}


JobTableView jobs(std::set<std::string> live) {
  JobTableView j;
  j.speaks_for_scheduler = true;
  j.live = std::move(live);
  return j;
}

std::vector<ReconcileAction> of_kind(const ReconcilePlan& p, ReconcileKind k) {
  std::vector<ReconcileAction> out;
  for (const auto& a : p.actions)
    if (a.kind == k) out.push_back(a);
  return out;
}

const WallTimePoint kT0 = WallTimePoint{} + std::chrono::hours(24 * 365 * 50);

// A reservation the poller recorded as made outside basild (seen): not a
// job's own until adopted.
RecordView seen(std::uint64_t id, const std::string& batch) {
  RecordView r;
  r.res_id = id;
  r.batch_id = batch;
  r.created = kT0;
  return r;
}

struct Cycle {
  Reconciler r{settings()};
  ReconcileInput in;
  Cycle() { in.now = kT0; }
  ReconcilePlan at(std::chrono::seconds offset) {
    in.now = kT0 + offset;
    return r.plan(in);
  }
};

// basild's record of reservation `id` of job `batch`, being released by
// its RELEASE loop (`loop`) or with none running (after a restart).
void releasing(Cycle& c, std::uint64_t id, const std::string& batch, bool loop = true) {
  RecordView rec;
  rec.res_id = id;
  rec.batch_id = batch;
  rec.releasing = true;
  c.in.records = {rec};
  if (loop) c.in.release_loops = {id};
}

TEST(ReconcilerTest, ReleasesOrphanAfterConsecutiveChecksSpanningTheGrace) {
  Cycle c;
  c.in.alps = {res(7, "1234"), res(8, "99")};
  c.in.jobs = jobs({"99"});
  // Three checks in a row but only 40 s apart in all: not yet.
  for (auto t : {0s, 20s, 40s}) EXPECT_TRUE(of_kind(c.at(t), ReconcileKind::kRelease).empty()) << t.count();
  auto plan = c.at(60s);
  auto rel = of_kind(plan, ReconcileKind::kRelease);
  ASSERT_EQ(rel.size(), 1u);
  EXPECT_EQ(rel[0].res_id, 7u);
  EXPECT_EQ(rel[0].candidate, CandidateKind::kOrphan);
  EXPECT_EQ(rel[0].age, 60s);
  EXPECT_EQ(rel[0].batch_id, "1234");
  EXPECT_FALSE(plan.alarm);
}

TEST(ReconcilerTest, GraceAloneIsNotEnoughWithoutConsecutiveChecks) {
  Cycle c;
  c.in.alps = {res(7, "1234"), res(1, "a"), res(2, "b"), res(3, "c")};
  c.in.jobs = jobs({"a", "b", "c"});
  c.at(0s);
  EXPECT_TRUE(of_kind(c.at(100s), ReconcileKind::kRelease).empty());  // seen twice
  EXPECT_EQ(of_kind(c.at(110s), ReconcileKind::kRelease).size(), 1u);
}

TEST(ReconcilerTest, AJobSeenLiveAgainResetsTheCount) {
  Cycle c;
  c.in.alps = {res(7, "1234")};
  c.in.jobs = jobs({});
  c.at(0s);
  c.at(30s);
  c.in.jobs = jobs({"1234"});  // the job table caught up
  c.at(60s);
  c.in.jobs = jobs({});
  EXPECT_TRUE(of_kind(c.at(90s), ReconcileKind::kRelease).empty());
  EXPECT_TRUE(of_kind(c.at(120s), ReconcileKind::kRelease).empty());
  EXPECT_EQ(of_kind(c.at(150s), ReconcileKind::kRelease).size(), 1u);
}

TEST(ReconcilerTest, NeverReleasesLiveYoungOrInteractiveReservationsOverManyCycles) {
  Cycle c;
  c.in.alps = {res(1, "live-job"), res(2, "UNKNOWN"), res(3, std::nullopt), res(4, "salloc-7"), res(5, "new-job")};
  c.in.jobs = jobs({"live-job"});
  ReconcileSettings s = settings();
  s.interactive_batch_ids = {"salloc-7"};
  c.r.set_settings(s);
  RecordView young;
  young.res_id = 5;
  young.batch_id = "new-job";
  young.job_reservation = true;
  young.created = kT0 + 1000s;  // basild made it at 1000 s; the job table never lists it
  c.in.records = {young, seen(1, "live-job")};
  for (int i = 0; i < 500; ++i) {
    const auto t = 1000s + std::chrono::seconds(i / 10);  // 50 s of cycles, inside the grace
    auto plan = c.at(t);
    // The live job's only reservation is adopted; nothing is released.
    for (const auto& a : plan.actions) {
      ASSERT_EQ(a.kind, ReconcileKind::kAdopt) << "cycle " << i;
      ASSERT_EQ(a.res_id, 1u);
    }
    ASSERT_TRUE(plan.candidates.empty()) << "cycle " << i << ": " << plan.candidates.front().res_id;
  }
}

TEST(ReconcilerTest, BasildsOwnReservationBecomesAnOrphanAfterTheGrace) {
  Cycle c;
  c.in.alps = {res(5, "ended-job"), res(1, "a"), res(2, "b"), res(3, "c")};
  c.in.jobs = jobs({"a", "b", "c"});
  RecordView rec;
  rec.res_id = 5;
  rec.batch_id = "ended-job";
  rec.job_reservation = true;
  rec.created = kT0;
  c.in.records = {rec};
  for (auto t : {0s, 30s}) EXPECT_TRUE(c.at(t).candidates.empty());
  for (auto t : {60s, 90s}) EXPECT_TRUE(of_kind(c.at(t), ReconcileKind::kRelease).empty());
  EXPECT_EQ(of_kind(c.at(120s), ReconcileKind::kRelease).size(), 1u);
}

TEST(ReconcilerTest, AFailedJobTableCountsNothingAndReleasesNothing) {
  Cycle c;
  c.in.alps = {res(7, "1234")};
  c.in.jobs = jobs({});
  c.at(0s);
  c.at(30s);
  c.in.jobs.ok = false;
  c.in.jobs.failure = "squeue: exit status 1";
  for (auto t : {60s, 90s, 120s}) {
    auto plan = c.at(t);
    EXPECT_FALSE(plan.counted);
    EXPECT_TRUE(of_kind(plan, ReconcileKind::kRelease).empty());
  }
  c.in.jobs = jobs({});
  // The third good check releases it.
  EXPECT_EQ(of_kind(c.at(150s), ReconcileKind::kRelease).size(), 1u);
}

TEST(ReconcilerTest, AnEmptyJobTableRaisesTheAlarmInsteadOfAMassRelease) {
  Cycle c;
  for (std::uint64_t i = 1; i <= 8; ++i) c.in.alps.push_back(res(i, "job" + std::to_string(i)));
  c.in.jobs = jobs({});
  for (auto t : {0s, 30s}) c.at(t);
  auto plan = c.at(60s);
  EXPECT_TRUE(plan.alarm);
  EXPECT_NE(plan.alarm_reason.find("8 of 8"), std::string::npos) << plan.alarm_reason;
  EXPECT_TRUE(of_kind(plan, ReconcileKind::kRelease).empty());
  EXPECT_EQ(plan.due, 8u);
  for (const auto& v : plan.candidates) EXPECT_EQ(v.state, CandidateState::kHeld);
}

TEST(ReconcilerTest, TheAlarmCountsCandidatesThatAreNotDueYet) {
  // A broken job table: one reservation is older and falls due first; the
  // others, made later, are still counting. Still an alarm, not a release.
  Cycle c;
  c.in.jobs = jobs({});
  c.in.alps = {res(1, "old")};
  for (auto t : {0s, 30s}) c.at(t);
  for (std::uint64_t i = 2; i <= 6; ++i) c.in.alps.push_back(res(i, "job" + std::to_string(i)));
  auto plan = c.at(60s);
  EXPECT_EQ(plan.due, 1u);
  EXPECT_TRUE(plan.alarm);
  EXPECT_TRUE(of_kind(plan, ReconcileKind::kRelease).empty());
}

TEST(ReconcilerTest, TheShareFloorLetsASmallMachineReleaseOneOrphan) {
  Cycle c;
  c.in.alps = {res(7, "gone")};
  c.in.jobs = jobs({});
  for (auto t : {0s, 30s}) c.at(t);
  auto plan = c.at(60s);
  EXPECT_FALSE(plan.alarm);
  EXPECT_EQ(of_kind(plan, ReconcileKind::kRelease).size(), 1u);
}

TEST(ReconcilerTest, AtMostNReleasesStartPerCycleOldestFirst) {
  Cycle c;
  ReconcileSettings s = settings();
  s.max_releases_per_cycle = 2;
  s.max_release_share = 1.0;
  c.r.set_settings(s);
  c.in.jobs = jobs({});
  c.in.alps = {res(3, "x3")};
  c.at(0s);
  c.in.alps = {res(3, "x3"), res(1, "x1"), res(2, "x2")};
  for (auto t : {10s, 30s}) c.at(t);
  auto plan = c.at(70s);
  auto rel = of_kind(plan, ReconcileKind::kRelease);
  ASSERT_EQ(rel.size(), 2u);
  EXPECT_EQ(rel[0].res_id, 3u);  // first seen at 0 s
  c.in.alps = {res(1, "x1"), res(2, "x2")};
  c.in.records = {};
  // Whichever was left waits for the next cycle.
  auto next = of_kind(c.at(80s), ReconcileKind::kRelease);
  EXPECT_EQ(next.size(), 1u);
}

TEST(ReconcilerTest, DryRunReleasesNothingAndSaysWhatItWould) {
  Cycle c;
  c.in.alps = {res(7, "gone")};
  c.in.jobs = jobs({});
  c.in.jobs.speaks_for_scheduler = false;  // only basild's own jobs: dry run
  for (auto t : {0s, 30s}) c.at(t);
  auto plan = c.at(60s);
  EXPECT_TRUE(plan.dry_run);
  EXPECT_TRUE(plan.actions.empty());
  ASSERT_EQ(plan.candidates.size(), 1u);
  EXPECT_EQ(plan.candidates[0].state, CandidateState::kDryRun);
}

TEST(ReconcilerTest, AStrayOfALiveJobIsReleasedAndItsRecordedReservationKept) {
  Cycle c;
  c.in.alps = {res(10, "42"), res(11, "42"), res(1, "a"), res(2, "b"), res(3, "c")};
  c.in.jobs = jobs({"42", "a", "b", "c"});
  RecordView own;
  own.res_id = 11;
  own.batch_id = "42";
  own.job_reservation = true;
  own.created = kT0;
  c.in.records = {own};
  for (auto t : {0s, 30s}) c.at(t);
  auto plan = c.at(60s);
  auto rel = of_kind(plan, ReconcileKind::kRelease);
  ASSERT_EQ(rel.size(), 1u);
  EXPECT_EQ(rel[0].res_id, 10u);
  EXPECT_EQ(rel[0].candidate, CandidateKind::kStray);
}

TEST(ReconcilerTest, OfTwoRecordedReservationsOfAJobTheAdoptedOneIsTheStray) {
  // The lost RESERVE's reservation was adopted before the retry's answer
  // named another: the answered one is the job's, the adopted one a stray.
  Cycle c;
  c.in.alps = {res(10, "42"), res(11, "42"), res(1, "a"), res(2, "b"), res(3, "c")};
  c.in.jobs = jobs({"42", "a", "b", "c"});
  RecordView adopted;
  adopted.res_id = 10;
  adopted.batch_id = "42";
  adopted.job_reservation = true;
  adopted.created = kT0 + 1s;
  RecordView answered = adopted;
  answered.res_id = 11;
  answered.answered = true;
  answered.created = kT0;  // older, but named by an answer
  c.in.records = {adopted, answered};
  for (auto t : {0s, 30s}) c.at(t);
  auto rel = of_kind(c.at(60s), ReconcileKind::kRelease);
  ASSERT_EQ(rel.size(), 1u);
  EXPECT_EQ(rel[0].res_id, 10u);
  EXPECT_EQ(rel[0].candidate, CandidateKind::kStray);
}

TEST(ReconcilerTest, ALiveJobWithExactlyOneUnrecordedReservationAdoptsIt) {
  Cycle c;
  c.in.alps = {res(10, "42")};
  c.in.jobs = jobs({"42"});
  c.in.records = {seen(10, "42")};
  auto plan = c.at(0s);
  auto adopt = of_kind(plan, ReconcileKind::kAdopt);
  ASSERT_EQ(adopt.size(), 1u);
  EXPECT_EQ(adopt[0].res_id, 10u);
  EXPECT_TRUE(of_kind(plan, ReconcileKind::kRelease).empty());
}

// The poller has not recorded it: a RESERVE of the job's is in flight (its
// answer records it), or the INVENTORY's node data was too old. Adopting
// needs the record; nothing is done until the poller has made one.
TEST(ReconcilerTest, ALiveJobsReservationThePollerHasNotRecordedIsLeftAlone) {
  Cycle c;
  c.in.alps = {res(10, "42")};
  c.in.jobs = jobs({"42"});
  for (auto t : {0s, 30s, 60s, 90s}) {
    auto plan = c.at(t);
    EXPECT_TRUE(plan.actions.empty());
    EXPECT_TRUE(plan.candidates.empty());
  }
  c.in.records = {seen(10, "42")};
  EXPECT_EQ(of_kind(c.at(120s), ReconcileKind::kAdopt).size(), 1u);
}

// A RESERVE whose intent is pending (its answer not recorded yet, or lost
// to a killed basild): the poller settles the reservation ALPS made for it,
// so however long that takes it is no orphan, even with no live job.
TEST(ReconcilerTest, AnUnrecordedReservationOfAPendingIntentIsNoOrphanUntilTheIntentSettles) {
  Cycle c;
  c.in.alps = {res(10, "42"), res(1, "a"), res(2, "b"), res(3, "c")};
  c.in.jobs = jobs({"a", "b", "c"});
  c.in.reserving = {"42"};
  for (auto t : {0s, 30s, 60s, 90s, 120s}) {
    auto plan = c.at(t);
    EXPECT_TRUE(plan.actions.empty()) << t.count();
    EXPECT_TRUE(plan.candidates.empty()) << t.count();
  }
  // No intent pending any more and still not recorded: an orphan like any
  // other, counted from now.
  c.in.reserving.clear();
  EXPECT_TRUE(of_kind(c.at(150s), ReconcileKind::kRelease).empty());
  EXPECT_TRUE(of_kind(c.at(180s), ReconcileKind::kRelease).empty());
  EXPECT_EQ(of_kind(c.at(210s), ReconcileKind::kRelease).size(), 1u);
}

// A pending intent protects only the reservation basild has not recorded:
// a recorded one of the same batch id past its grace is an orphan as before.
TEST(ReconcilerTest, APendingIntentDoesNotProtectARecordedReservationOfItsBatchId) {
  Cycle c;
  c.in.alps = {res(10, "42"), res(1, "a"), res(2, "b"), res(3, "c")};
  c.in.jobs = jobs({"a", "b", "c"});
  c.in.records = {seen(10, "42")};
  c.in.reserving = {"42"};
  c.at(0s);
  c.at(30s);
  EXPECT_EQ(of_kind(c.at(60s), ReconcileKind::kRelease).size(), 1u);
}

TEST(ReconcilerTest, ALiveJobWithSeveralUnrecordedReservationsIsAmbiguousAndUntouched) {
  Cycle c;
  c.in.alps = {res(10, "42"), res(11, "42")};
  c.in.jobs = jobs({"42"});
  c.in.records = {seen(10, "42"), seen(11, "42")};
  for (auto t : {0s, 30s, 60s, 90s}) {
    auto plan = c.at(t);
    EXPECT_TRUE(plan.actions.empty());
    ASSERT_EQ(plan.candidates.size(), 2u);
    EXPECT_EQ(plan.candidates[0].state, CandidateState::kAmbiguous);
  }
}

TEST(ReconcilerTest, AReleasingReservationWithoutALoopIsReleasedAgain) {
  Cycle c;
  c.in.alps = {res(7, "gone")};
  c.in.jobs = jobs({});
  releasing(c, 7, "gone", false);
  auto rel = of_kind(c.at(0s), ReconcileKind::kRelease);
  ASSERT_EQ(rel.size(), 1u);
  EXPECT_FALSE(rel[0].candidate.has_value());
  c.in.release_loops = {7};
  EXPECT_TRUE(of_kind(c.at(10s), ReconcileKind::kRelease).empty());
}

// A reservation released while its job is still live in the job table (the
// epilog's release at a job's end, before Slurm lists the job as done).
TEST(ReconcilerTest, ClaimsThatOutlastTheTimeoutAreApkilledOncePerTimeout) {
  Cycle c;
  c.in.alps = {res(7, "ending", {501, 502})};
  c.in.jobs = jobs({"ending"});
  releasing(c, 7, "ending");
  EXPECT_TRUE(of_kind(c.at(0s), ReconcileKind::kApkill).empty());
  EXPECT_TRUE(of_kind(c.at(119s), ReconcileKind::kApkill).empty());
  auto kill = of_kind(c.at(120s), ReconcileKind::kApkill);
  ASSERT_EQ(kill.size(), 1u);
  EXPECT_EQ(kill[0].apids, (std::vector<std::uint64_t>{501, 502}));
  EXPECT_TRUE(of_kind(c.at(200s), ReconcileKind::kApkill).empty());
  EXPECT_EQ(of_kind(c.at(240s), ReconcileKind::kApkill).size(), 1u);
}

TEST(ReconcilerTest, ClaimsThatEndBeforeTheTimeoutAreNeverApkilled) {
  Cycle c;
  c.in.alps = {res(7, "ending", {501})};
  c.in.jobs = jobs({"ending"});
  releasing(c, 7, "ending");
  c.at(0s);
  c.in.alps = {res(7, "ending")};
  c.at(100s);
  c.in.alps = {res(7, "ending", {503})};  // a new claim starts the clock again
  EXPECT_TRUE(of_kind(c.at(150s), ReconcileKind::kApkill).empty());
  EXPECT_TRUE(of_kind(c.at(269s), ReconcileKind::kApkill).empty());
  EXPECT_EQ(of_kind(c.at(270s), ReconcileKind::kApkill).size(), 1u);
}

// Slurm released, then apkilled its applications at once (select/alps):
// for a reservation whose job is gone, nothing waits claims_timeout.
TEST(ReconcilerTest, ClaimsOfAReservationWhoseJobIsGoneAreApkilledAtOnceThenOncePerTimeout) {
  Cycle c;
  c.in.alps = {res(7, "gone", {501})};
  c.in.jobs = jobs({});
  releasing(c, 7, "gone");
  auto kill = of_kind(c.at(0s), ReconcileKind::kApkill);
  ASSERT_EQ(kill.size(), 1u);
  EXPECT_EQ(kill[0].apids, (std::vector<std::uint64_t>{501}));
  EXPECT_NE(kill[0].reason.find("job gone gone"), std::string::npos) << kill[0].reason;
  EXPECT_TRUE(of_kind(c.at(60s), ReconcileKind::kApkill).empty()) << "once per claims_timeout";
  EXPECT_EQ(of_kind(c.at(120s), ReconcileKind::kApkill).size(), 1u);
}

// scancel: Slurm lists the job COMPLETING (then CANCELLED) while its
// epilog releases; its processes are gone, its applications ALPS's alone.
TEST(ReconcilerTest, ClaimsOfAReservationWhoseJobIsListedEndedAreApkilledAtOnce) {
  Cycle c;
  c.in.alps = {res(7, "ending", {501})};
  c.in.jobs = jobs({"ending"});
  c.in.jobs.ended = {"ending"};
  releasing(c, 7, "ending");
  EXPECT_EQ(of_kind(c.at(0s), ReconcileKind::kApkill).size(), 1u);
  EXPECT_TRUE(job_state_ended("COMPLETING"));
  EXPECT_TRUE(job_state_ended("OUT_OF_MEMORY"));
  EXPECT_FALSE(job_state_ended("RUNNING"));
  EXPECT_FALSE(job_state_ended("SUSPENDED"));
  EXPECT_FALSE(job_state_ended("CONFIGURING"));
  // Requeued (preemption in REQUEUE mode): its processes were killed; its
  // next start reserves anew, so the old reservation's applications are
  // leftovers that would hold the nodes for claims_timeout.
  EXPECT_TRUE(job_state_ended("REQUEUED"));
  EXPECT_TRUE(job_state_ended("PENDING"));
  EXPECT_FALSE(job_state_ended(""));
}

TEST(ReconcilerTest, ClaimsWaitTheTimeoutWhileTheJobTableFailsOrTheReservationIsInteractive) {
  for (const std::optional<std::string>& batch : {std::optional<std::string>("gone"), std::optional<std::string>()}) {
    Cycle c;
    c.in.alps = {res(7, batch, {501})};
    c.in.jobs = jobs({});
    if (batch) {
      c.in.jobs.ok = false;
      c.in.jobs.failure = "squeue: timed out";
    }
    releasing(c, 7, batch.value_or(""));
    EXPECT_TRUE(of_kind(c.at(0s), ReconcileKind::kApkill).empty()) << batch.value_or("interactive");
    EXPECT_EQ(of_kind(c.at(120s), ReconcileKind::kApkill).size(), 1u) << batch.value_or("interactive");
  }
}

// Property: whatever the job table says over random cycles, a reservation
// of a job listed live in the same cycle is never released as an orphan,
// nothing is released in a cycle whose job table failed, and every release
// follows `consecutive` counted sightings spanning the grace.
TEST(ReconcilerTest, RandomCyclesNeverReleaseALiveJobsOnlyReservation) {
  std::mt19937 rng(12345);
  Reconciler r(settings());
  for (int cycle = 0; cycle < 2000; ++cycle) {
    ReconcileInput in;
    in.now = kT0 + std::chrono::seconds(cycle * 15);
    in.jobs = jobs({});
    in.jobs.ok = rng() % 10 != 0;
    for (std::uint64_t id = 1; id <= 12; ++id) {
      if (rng() % 8 == 0) continue;  // not listed this cycle
      in.alps.push_back(res(id, "job" + std::to_string(id)));
      if (rng() % 3 != 0) in.jobs.live.insert("job" + std::to_string(id));
    }
    auto plan = r.plan(in);
    for (const auto& a : plan.actions) {
      ASSERT_TRUE(in.jobs.ok);
      if (a.kind == ReconcileKind::kAdopt) {
        ASSERT_EQ(in.jobs.live.count(a.batch_id), 1u);
        continue;
      }
      ASSERT_EQ(a.kind, ReconcileKind::kRelease);
      ASSERT_EQ(in.jobs.live.count(a.batch_id), 0u) << a.batch_id;
      ASSERT_GE(a.age, settings().grace);
    }
  }
}

TEST(ReconcilerTest, AlpsReservationsTakeNodesAndClaimsFromTheInventory) {
  basil::Inventory inv;
  basil::Node n;
  n.node_id = 40;
  basil::Processor p;
  p.allocations = {9};
  n.processors.push_back(p);
  inv.nodes.push_back(n);
  basil::Reservation rsv;
  rsv.reservation_id = 9;
  rsv.batch_id = "77";
  rsv.user_name = "bob";
  basil::Application placeholder;
  placeholder.application_id = 100;
  basil::Application aprun;
  aprun.application_id = 101;
  aprun.time_stamp = 1700000000;
  rsv.applications = {placeholder, aprun};
  inv.reservations.push_back(rsv);
  auto list = alps_reservations(inv);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].nodes.format(), "40");
  EXPECT_EQ(list[0].apids, (std::vector<std::uint64_t>{101}));
  EXPECT_EQ(*list[0].batch_id, "77");
}

}  // namespace
}  // namespace basild

namespace basild {
namespace {

// Node sync keeps Slurm off the nodes of these (core/node_sync.h).
TEST(ReconcilerHeldTest, ReservationsNoLiveJobOwnsAreHeldForOthersAndALiveJobsAreNot) {
  Cycle c;
  RecordView mine;
  mine.res_id = 2;
  mine.batch_id = "20";
  mine.job_reservation = true;
  mine.answered = true;
  mine.created = kT0;
  RecordView young = mine;
  young.res_id = 3;
  young.batch_id = "30";
  RecordView leaving = mine, ending = mine;
  leaving.res_id = 6;
  leaving.batch_id = "60";
  leaving.releasing = true;
  ending.res_id = 7;
  ending.batch_id = "70";
  ending.releasing = true;
  c.in.alps = {res(1, "UNKNOWN"), res(2, "20"), res(3, "30"), res(4, "40"), res(5, std::nullopt), res(6, "60"),
               res(7, "70", {701})};
  c.in.records = {mine, young, leaving, ending};
  c.in.release_loops = {6, 7};
  c.in.jobs = jobs({"20", "70"});
  // 1 interactive, 2 the live job's own, 3 basild's for a job the table
  // does not list yet (young), 4 an orphan counting, 5 interactive, 6
  // being released with no application left (leaving), 7 being released
  // while an aprun still runs in it.
  EXPECT_EQ(c.at(0s).held_for_others, (std::set<std::uint64_t>{1, 4, 5, 7}));
  c.in.jobs.ok = false;
  c.in.jobs.failure = "squeue: timed out";
  EXPECT_EQ(c.at(10s).held_for_others, (std::set<std::uint64_t>{1, 5, 7})) << "uncounted: only what needs no job table";
}

}  // namespace
}  // namespace basild

namespace basild {
namespace {

// A standby (another basild's slurmctld in charge) counts and shows its
// candidates but releases none and adopts nothing; a release its own
// epilog handed it goes on.
TEST(ReconcilerTwoBasildsTest, AStandbyReleasesNoCandidateAndAdoptsNothingButFinishesItsOwnRelease) {
  Cycle c;
  c.in.standby = true;
  c.in.jobs = jobs({"live"});
  c.in.alps = {res(1, "gone-job"), res(2, "live"), res(3, "ended")};
  RecordView mine;
  mine.res_id = 3;
  mine.batch_id = "ended";
  mine.releasing = true;
  c.in.records = {seen(1, "gone-job"), seen(2, "live"), mine};
  ReconcilePlan last;
  for (int i = 0; i <= 3; ++i) last = c.at(std::chrono::seconds(i * 30));
  ASSERT_EQ(last.actions.size(), 1u);
  EXPECT_EQ(last.actions[0].kind, ReconcileKind::kRelease);
  EXPECT_EQ(last.actions[0].res_id, 3u);
  EXPECT_FALSE(last.actions[0].candidate.has_value()) << "its own release, not a candidate";
  ASSERT_EQ(last.candidates.size(), 1u);
  EXPECT_EQ(last.candidates[0].res_id, 1u);
  EXPECT_EQ(last.candidates[0].state, CandidateState::kStandby);
  c.in.standby = false;  // its slurmctld is in charge now
  last = c.at(120s);
  EXPECT_EQ(of_kind(last, ReconcileKind::kAdopt).size(), 1u);
  ASSERT_EQ(last.candidates.size(), 1u);
  EXPECT_EQ(last.candidates[0].state, CandidateState::kReleasing);
}

// Two basilds on one ALPS (a backup controller's beside the primary's),
// both planning every cycle and both acting for the cluster, the worst
// case of a role mix-up: jobs are reserved through either, now and then
// reserved again through the other (a prolog run again after a takeover:
// the newer reservation is the job's), and end. Whatever either releases,
// it is never the reservation a live job uses.
TEST(ReconcilerTwoBasildsTest, TwoPlannersActingAtOnceNeverReleaseTheReservationALiveJobUses) {
  std::mt19937 rng(4242);
  ReconcileSettings s = settings();
  s.max_release_share = 1.0;  // the share alarm is another test's: here every due one goes
  struct Basild {
    explicit Basild(const ReconcileSettings& with) : r(with) {}
    Reconciler r;
    std::map<std::uint64_t, RecordView> records;
  };
  Basild basilds[2] = {Basild(s), Basild(s)};
  std::map<std::uint64_t, std::string> alps;    // reservation -> batch id
  std::map<std::string, std::uint64_t> in_use;  // live job -> the reservation its prolog got last
  std::uint64_t next_id = 1;
  int next_job = 1;
  std::size_t released = 0;
  const auto reserve = [&](int via, const std::string& batch, WallTimePoint now) {
    const std::uint64_t id = next_id++;
    alps[id] = batch;
    in_use[batch] = id;
    RecordView rec;
    rec.res_id = id;
    rec.batch_id = batch;
    rec.job_reservation = true;
    rec.answered = true;
    rec.created = now;
    basilds[via].records[id] = rec;
  };
  for (int cycle = 0; cycle < 1500; ++cycle) {
    const WallTimePoint now = kT0 + std::chrono::seconds(cycle * 20);
    if (rng() % 2 == 0) reserve(static_cast<int>(rng() % 2), "job" + std::to_string(next_job++), now);
    if (!in_use.empty() && rng() % 12 == 0) {  // a prolog run again through the other basild
      auto it = std::next(in_use.begin(), static_cast<long>(rng() % in_use.size()));
      const bool via_a = basilds[0].records.count(it->second) != 0;
      reserve(via_a ? 1 : 0, std::string(it->first), now);
    }
    if (!in_use.empty() && rng() % 2 == 0)  // a job ends; its reservations are orphans now
      in_use.erase(std::next(in_use.begin(), static_cast<long>(rng() % in_use.size())));
    JobTableView table = jobs({});
    for (const auto& [batch, id] : in_use) table.live.insert(batch);
    for (auto& b : basilds) {
      // The poller records what the other made as seen; what left ALPS, gone.
      std::erase_if(b.records, [&](const auto& r) { return alps.count(r.first) == 0; });
      for (const auto& [id, batch] : alps)
        if (b.records.count(id) == 0) b.records[id] = seen(id, batch);
      ReconcileInput in;
      in.now = now;
      in.jobs = table;
      in.shared_alps = true;
      for (const auto& [id, batch] : alps) in.alps.push_back(res(id, batch));
      for (const auto& [id, rec] : b.records) in.records.push_back(rec);
      for (const auto& a : b.r.plan(in).actions) {
        if (a.kind == ReconcileKind::kAdopt) {
          b.records[a.res_id].job_reservation = true;
          continue;
        }
        if (a.kind != ReconcileKind::kRelease) continue;
        const auto live = in_use.find(a.batch_id);
        ASSERT_FALSE(live != in_use.end() && live->second == a.res_id)
            << "cycle " << cycle << ": reservation " << a.res_id << " of live job " << a.batch_id << " released";
        alps.erase(a.res_id);
        ++released;
      }
    }
  }
  EXPECT_GT(released, 500u) << "the orphans and strays are released all the same";
}

}  // namespace
}  // namespace basild
