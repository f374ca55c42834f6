// The reconciler's rules one at a time (basild/core/reconciler.h lists
// them): each rule of step 1 on the facts that make it hold, the cases
// where two hold and the earlier decides, the counting, and each rule of
// step 2. reconciler_test.cc runs the whole planner over cycles.
#include "basild/core/reconciler.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <vector>

#include "tests/support/files.h"

namespace basild {
namespace {

using namespace std::chrono_literals;
using Rule = ReservationRule;

const WallTimePoint kNow = WallTimePoint{} + std::chrono::hours(24 * 365 * 50);

// One reservation's facts; each test changes what its rule needs.
class ReconcilerRulesTest : public ::testing::Test {
 protected:
  ReconcilerRulesTest() {
    alps_.id = 7;
    alps_.batch_id = "100";
    alps_.user = "alice";
    alps_.nodes = basil::NidList::from_nids({40});
    jobs_.speaks_for_scheduler = true;
    settings_.grace = 60s;
    settings_.consecutive = 3;
    settings_.claims_timeout = 120s;
  }

  ReservationFacts facts() {
    ReservationFacts f;
    f.alps = &alps_;
    f.record = has_record_ ? &record_ : nullptr;
    f.job_own = own_;
    f.alps_of_batch = alps_of_batch_;
    f.jobs = &jobs_;
    f.reserving = reserving_;
    f.release_loop = release_loop_;
    f.shared_alps = shared_alps_;
    f.settings = &settings_;
    f.now = kNow;
    return f;
  }
  Rule rule() { return rule_for(facts()); }
  ReservationVerdict judged(const CandidateCount* count = nullptr, const ClaimsWatch* claims = nullptr) {
    return judge(facts(), count, claims);
  }

  // basild's record of the reservation.
  void recorded(bool job_reservation, WallTimePoint created = kNow - 1h) {
    has_record_ = true;
    record_.res_id = alps_.id;
    record_.batch_id = *alps_.batch_id;
    record_.job_reservation = job_reservation;
    record_.created = created;
  }
  void live() { jobs_.live.insert(*alps_.batch_id); }
  // The live job's own reservation is `id`.
  void owned_by(std::uint64_t id) {
    other_.res_id = id;
    other_.batch_id = *alps_.batch_id;
    other_.job_reservation = true;
    own_ = id == alps_.id ? &record_ : &other_;
  }

  AlpsReservation alps_;
  RecordView record_;
  bool has_record_ = false;
  RecordView other_;
  const RecordView* own_ = nullptr;
  std::size_t alps_of_batch_ = 1;
  JobTableView jobs_;
  bool reserving_ = false;
  bool release_loop_ = false;
  bool shared_alps_ = false;
  ReconcileSettings settings_;
};

// ---- step 1, one rule at a time

TEST_F(ReconcilerRulesTest, ReleasingResumesBasildsUnprovenReleaseWhenNoLoopRunsForIt) {
  recorded(true);
  record_.releasing = true;
  auto v = judged();
  EXPECT_EQ(v.rule, Rule::kReleasing);
  ASSERT_EQ(v.actions.size(), 1u);
  EXPECT_EQ(v.actions[0].kind, ReconcileAction::Kind::kRelease);
  EXPECT_FALSE(v.actions[0].candidate.has_value());
  EXPECT_FALSE(v.batch);
  EXPECT_FALSE(v.count.has_value());
  release_loop_ = true;
  EXPECT_TRUE(judged().actions.empty());
}

TEST_F(ReconcilerRulesTest, ReleasingApkillsClaimsThatOutlastTheTimeout) {
  recorded(true);
  record_.releasing = true;
  release_loop_ = true;
  alps_.apids = {501};
  auto first = judged();
  ASSERT_TRUE(first.claims.has_value());
  EXPECT_EQ(first.claims->claims_since, kNow);
  ClaimsWatch since{kNow - 120s, std::nullopt};
  auto stuck = judged(nullptr, &since);
  ASSERT_EQ(stuck.actions.size(), 1u);
  EXPECT_EQ(stuck.actions[0].kind, ReconcileAction::Kind::kApkill);
  EXPECT_EQ(stuck.actions[0].apids, std::vector<std::uint64_t>{501});
  EXPECT_EQ(stuck.claims->apkilled, kNow);
}

TEST_F(ReconcilerRulesTest, InteractiveReservationsAreNoCandidatesAndNoBatchReservations) {
  for (std::optional<std::string> batch :
       {std::optional<std::string>{}, std::optional<std::string>{""}, std::optional<std::string>{"UNKNOWN"},
        std::optional<std::string>{"salloc"}}) {
    alps_.batch_id = batch;
    settings_.interactive_batch_ids = {"salloc"};
    auto v = judged();
    EXPECT_EQ(v.rule, Rule::kInteractive) << batch.value_or("(none)");
    EXPECT_FALSE(v.batch);
    EXPECT_FALSE(v.count.has_value());
  }
}

TEST_F(ReconcilerRulesTest, UncountedKeepsTheCountAsItWasWhenTheJobTableFailed) {
  jobs_.ok = false;
  CandidateCount so_far{CandidateKind::kOrphan, kNow - 90s, 5};
  auto v = judged(&so_far);
  EXPECT_EQ(v.rule, Rule::kUncounted);
  ASSERT_TRUE(v.count.has_value());
  EXPECT_EQ(v.count->seen, 5u);
  EXPECT_EQ(v.count->first_seen, kNow - 90s);
  EXPECT_FALSE(v.due);
  EXPECT_TRUE(v.batch);
  EXPECT_FALSE(judged().count.has_value());
}

TEST_F(ReconcilerRulesTest, StrayIsALiveJobsReservationOtherThanItsOwn) {
  live();
  recorded(false);
  owned_by(8);
  auto v = judged();
  EXPECT_EQ(v.rule, Rule::kStray);
  ASSERT_TRUE(v.count.has_value());
  EXPECT_EQ(v.count->kind, CandidateKind::kStray);
  EXPECT_EQ(v.count->seen, 1u);
  EXPECT_EQ(v.count->first_seen, kNow);
}

// With a backup controller's basild on the same ALPS, a reservation the
// other basild made may be the job's: only one older than an own one this
// basild's RESERVE answer named is a stray.
TEST_F(ReconcilerRulesTest, WithASecondBasildOnlyAnOlderReservationThanAnAnsweredOwnOneIsAStray) {
  shared_alps_ = true;
  live();
  recorded(false);
  alps_of_batch_ = 2;
  owned_by(8);
  other_.answered = true;
  EXPECT_EQ(rule(), Rule::kStray);  // 7 < 8: the older one
  alps_.id = 9;
  record_.res_id = 9;
  EXPECT_EQ(rule(), Rule::kAmbiguous) << "the other basild's newer RESERVE, for a prolog run again";
  alps_.id = 7;
  record_.res_id = 7;
  other_.answered = false;  // adopted only: which is the job's is not known here
  EXPECT_EQ(rule(), Rule::kAmbiguous);
  shared_alps_ = false;
  EXPECT_EQ(rule(), Rule::kStray) << "one basild: every other reservation of the job";
}

TEST_F(ReconcilerRulesTest, OwnIsTheLiveJobsOwnReservationAndEndsItsCount) {
  live();
  recorded(true);
  owned_by(alps_.id);
  CandidateCount so_far{CandidateKind::kOrphan, kNow - 30s, 2};
  auto v = judged(&so_far);
  EXPECT_EQ(v.rule, Rule::kOwn);
  EXPECT_FALSE(v.count.has_value());
  EXPECT_TRUE(v.actions.empty());
}

TEST_F(ReconcilerRulesTest, UnrecordedLeavesALiveJobsReservationToThePoller) {
  live();
  auto v = judged();
  EXPECT_EQ(v.rule, Rule::kUnrecorded);
  EXPECT_TRUE(v.actions.empty());
  EXPECT_FALSE(v.count.has_value());
}

TEST_F(ReconcilerRulesTest, AdoptTakesTheOnlyReservationOfALiveJobWithoutAnOwnOne) {
  live();
  recorded(false);
  auto v = judged();
  EXPECT_EQ(v.rule, Rule::kAdopt);
  ASSERT_EQ(v.actions.size(), 1u);
  EXPECT_EQ(v.actions[0].kind, ReconcileAction::Kind::kAdopt);
  EXPECT_EQ(v.actions[0].res_id, 7u);
  EXPECT_EQ(v.actions[0].reason, "live job 100 holds no recorded reservation and ALPS lists exactly this one");
}

TEST_F(ReconcilerRulesTest, AmbiguousDoesNothingWhenALiveJobWithoutAnOwnOneHasSeveral) {
  live();
  recorded(false);
  alps_of_batch_ = 2;
  auto v = judged();
  EXPECT_EQ(v.rule, Rule::kAmbiguous);
  EXPECT_TRUE(v.actions.empty());
  EXPECT_FALSE(v.count.has_value());
}

TEST_F(ReconcilerRulesTest, ReservingLeavesAnUnrecordedReservationOfAPendingIntentToThePoller) {
  reserving_ = true;
  auto v = judged();
  EXPECT_EQ(v.rule, Rule::kReserving);
  EXPECT_FALSE(v.count.has_value());
}

TEST_F(ReconcilerRulesTest, YoungSparesBasildsOwnReservationWithinTheGrace) {
  recorded(true, kNow - 59s);
  EXPECT_EQ(rule(), Rule::kYoung);
  recorded(true, kNow - 60s);
  EXPECT_EQ(rule(), Rule::kOrphan);
}

TEST_F(ReconcilerRulesTest, OrphanIsAReservationOfNoLiveJob) {
  auto v = judged();
  EXPECT_EQ(v.rule, Rule::kOrphan);
  ASSERT_TRUE(v.count.has_value());
  EXPECT_EQ(v.count->kind, CandidateKind::kOrphan);
  EXPECT_TRUE(v.batch);
}

// ---- step 1, where two rules hold the earlier decides

TEST_F(ReconcilerRulesTest, ReleasingComesBeforeInteractiveAndAFailedJobTable) {
  alps_.batch_id = "UNKNOWN";
  recorded(true);
  record_.releasing = true;
  jobs_.ok = false;
  EXPECT_EQ(rule(), Rule::kReleasing);
}

TEST_F(ReconcilerRulesTest, InteractiveComesBeforeAFailedJobTable) {
  alps_.batch_id = "UNKNOWN";
  jobs_.ok = false;
  auto v = judged();
  EXPECT_EQ(v.rule, Rule::kInteractive);
  EXPECT_FALSE(v.batch);
}

TEST_F(ReconcilerRulesTest, AFailedJobTableComesBeforeEveryJobRule) {
  jobs_.ok = false;
  live();
  owned_by(8);
  EXPECT_EQ(rule(), Rule::kUncounted);
}

TEST_F(ReconcilerRulesTest, StrayComesBeforeUnrecorded) {
  live();
  owned_by(8);  // and no record of this one
  EXPECT_EQ(rule(), Rule::kStray);
}

TEST_F(ReconcilerRulesTest, UnrecordedComesBeforeAdopt) {
  live();
  alps_of_batch_ = 1;
  EXPECT_EQ(rule(), Rule::kUnrecorded);
}

TEST_F(ReconcilerRulesTest, ALiveJobComesBeforeAPendingIntent) {
  live();
  reserving_ = true;
  EXPECT_EQ(rule(), Rule::kUnrecorded);
}

TEST_F(ReconcilerRulesTest, APendingIntentSparesOnlyAnUnrecordedReservation) {
  reserving_ = true;
  recorded(false);
  EXPECT_EQ(rule(), Rule::kOrphan);
}

TEST_F(ReconcilerRulesTest, YoungSparesOnlyAReservationBasildMadeForItsJob) {
  recorded(false, kNow);  // seen in INVENTORY just now, not basild's
  EXPECT_EQ(rule(), Rule::kOrphan);
}

// ---- counting

TEST_F(ReconcilerRulesTest, TheSameKindCountsOnAndIsDueAfterConsecutiveChecksSpanningTheGrace) {
  CandidateCount so_far{CandidateKind::kOrphan, kNow - 60s, 2};
  auto v = judged(&so_far);
  EXPECT_EQ(v.count->seen, 3u);
  EXPECT_EQ(v.count->first_seen, kNow - 60s);
  EXPECT_TRUE(v.due);
  so_far.first_seen = kNow - 59s;
  EXPECT_FALSE(judged(&so_far).due);
  so_far = {CandidateKind::kOrphan, kNow - 600s, 1};
  EXPECT_FALSE(judged(&so_far).due);
}

TEST_F(ReconcilerRulesTest, AnotherKindStartsTheCountAgainFromNow) {
  CandidateCount so_far{CandidateKind::kStray, kNow - 600s, 9};
  auto v = judged(&so_far);
  EXPECT_EQ(v.count->kind, CandidateKind::kOrphan);
  EXPECT_EQ(v.count->seen, 1u);
  EXPECT_EQ(v.count->first_seen, kNow);
}

TEST_F(ReconcilerRulesTest, AClaimsWatchIsKeptWhateverTheRule) {
  ClaimsWatch w{kNow - 10s, kNow - 5s};
  auto v = judged(nullptr, &w);
  EXPECT_EQ(v.rule, Rule::kOrphan);
  ASSERT_TRUE(v.claims.has_value());
  EXPECT_EQ(v.claims->claims_since, kNow - 10s);
}

// The header's list of step 1 is the table the code applies, in its order.
TEST(ReconcilerRulesDocTest, TheHeaderListsTheRulesInTheOrderTheyApply) {
  std::istringstream header(basil_test::read_file(std::string(BASIL_TEST_DATA) + "/../../basild/core/reconciler.h"));
  const std::regex row(R"(^//\s+([0-9]+) ([a-z]+) .*)");
  std::vector<std::string> listed;
  std::string line;
  while (std::getline(header, line)) {
    std::smatch m;
    if (std::regex_match(line, m, row) && std::stoul(m[1].str()) == listed.size() + 1) listed.push_back(m[2].str());
    if (line.rfind("// Step 2", 0) == 0) break;
  }
  std::vector<std::string> applied;
  for (int i = 0; i <= static_cast<int>(Rule::kOrphan); ++i)
    applied.emplace_back(reservation_rule_name(static_cast<Rule>(i)));
  EXPECT_EQ(listed, applied);
}

// ---- step 2, one rule at a time

ReconcilePlan plan_with(std::vector<CandidateState> states) {
  ReconcilePlan p;
  std::uint64_t id = 1;
  for (auto s : states) {
    CandidateView v;
    v.res_id = id;
    v.batch_id = "job" + std::to_string(id);
    v.first_seen = kNow - std::chrono::seconds(100 - id);  // oldest first
    v.seen = 3;
    v.state = s;
    p.candidates.push_back(v);
    ++id;
  }
  return p;
}

std::vector<CandidateState> states(const ReconcilePlan& p) {
  std::vector<CandidateState> out;
  for (const auto& v : p.candidates) out.push_back(v.state);
  return out;
}

ReconcileSettings step2_settings() {
  ReconcileSettings s;
  s.max_releases_per_cycle = 2;
  s.max_release_share = 0.25;
  s.release_share_floor = 2;
  return s;
}

using S = CandidateState;

TEST(ReconcilerStep2Test, NothingDueReleasesNothingAndRaisesNoAlarmHoweverManyCount) {
  auto p = plan_with({S::kCounting, S::kCounting, S::kCounting, S::kCounting});
  settle_candidates(p, 4, step2_settings(), kNow);
  EXPECT_EQ(p.due, 0u);
  EXPECT_FALSE(p.alarm);
  EXPECT_TRUE(p.actions.empty());
}

TEST(ReconcilerStep2Test, DryRunShowsTheDueOnesAndComesBeforeTheShareAlarm) {
  auto p = plan_with({S::kDue, S::kDue, S::kDue, S::kCounting});
  p.dry_run = true;
  settle_candidates(p, 4, step2_settings(), kNow);
  EXPECT_EQ(p.due, 3u);
  EXPECT_FALSE(p.alarm);
  EXPECT_TRUE(p.actions.empty());
  EXPECT_EQ(states(p), (std::vector<S>{S::kDryRun, S::kDryRun, S::kDryRun, S::kCounting}));
}

TEST(ReconcilerStep2Test, AStandbyLeavesTheDueOnesToTheBasildInChargeAndComesBeforeTheShareAlarm) {
  auto p = plan_with({S::kDue, S::kDue, S::kDue, S::kCounting});
  p.standby = true;
  settle_candidates(p, 4, step2_settings(), kNow);
  EXPECT_EQ(p.due, 3u);
  EXPECT_FALSE(p.alarm);
  EXPECT_TRUE(p.actions.empty());
  EXPECT_EQ(states(p), (std::vector<S>{S::kStandby, S::kStandby, S::kStandby, S::kCounting}));
}

TEST(ReconcilerStep2Test, ShareAlarmHoldsEveryDueOneWhenTooManyCandidatesCountingIncluded) {
  auto p = plan_with({S::kDue, S::kCounting, S::kCounting});
  settle_candidates(p, 4, step2_settings(), kNow);
  EXPECT_TRUE(p.alarm);
  EXPECT_EQ(p.alarm_reason,
            "3 of 4 batch reservations have no live job (more than 25%): nothing released; check the job-table "
            "sources");
  EXPECT_TRUE(p.actions.empty());
  EXPECT_EQ(states(p), (std::vector<S>{S::kHeld, S::kCounting, S::kCounting}));
}

TEST(ReconcilerStep2Test, ShareAlarmSparesCandidatesUpToTheFloor) {
  auto p = plan_with({S::kDue, S::kDue});
  settle_candidates(p, 2, step2_settings(), kNow);
  EXPECT_FALSE(p.alarm);
  EXPECT_EQ(p.actions.size(), 2u);
}

TEST(ReconcilerStep2Test, ReleaseStartsTheOldestDueOnesUpToThePerCycleLimit) {
  auto p = plan_with({S::kDue, S::kCounting, S::kDue, S::kDue});
  settle_candidates(p, 100, step2_settings(), kNow);
  EXPECT_FALSE(p.alarm);
  ASSERT_EQ(p.actions.size(), 2u);
  EXPECT_EQ(p.actions[0].res_id, 1u);
  EXPECT_EQ(p.actions[1].res_id, 3u);
  EXPECT_EQ(p.actions[0].candidate, CandidateKind::kOrphan);
  EXPECT_EQ(p.actions[0].reason, "batch_id job1 is not a live job (seen so 3 times in a row)");
  EXPECT_EQ(p.actions[0].age, 99s);
  EXPECT_EQ(states(p), (std::vector<S>{S::kReleasing, S::kCounting, S::kReleasing, S::kDue}));
}

TEST(ReconcilerStep2Test, CandidateStatesPrintAsBasilctlOrphansShowsThem) {
  std::vector<std::string> names;
  for (auto s : {S::kCounting, S::kDue, S::kReleasing, S::kHeld, S::kDryRun, S::kAmbiguous, S::kStandby})
    names.emplace_back(candidate_state_name(s));
  EXPECT_EQ(names, (std::vector<std::string>{"counting", "due", "releasing", "held", "dry-run", "ambiguous",
                                             "standby"}));
}

}  // namespace
}  // namespace basild
