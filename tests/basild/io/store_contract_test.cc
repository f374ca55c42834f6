// The state store's contract (basild/core/state_store.h: round trips, intents, the state machine,
// the audit trail, list orders and limits), once for each StateStore: the SQLite store on real
// files in temporary directories ("Sqlite") and the in-memory fake the other tests use ("Memory").
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "basild/core/state_store.h"
#include "tests/basild/io/store_fixture.h"

namespace basild {
namespace {

using namespace std::chrono_literals;
using namespace store_testing;

INSTANTIATE_TEST_SUITE_P(, StoreContractTest, ::testing::Values("Sqlite", "Memory"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// ---------------------------------------------------------------- the contract, for each store

TEST_P(StoreContractTest, ReservedReservationRoundTripsAndSettlesItsIntent) {
  auto s = make_store();
  ASSERT_TRUE(s);
  auto intent = s->record_intent("1234", "alice", "<ReserveParamArray/>");
  ASSERT_TRUE(intent) << intent.status().message();
  now_ += 1s;
  ReservationRecord r = reservation(77, "1234");
  r.pagg_id = 0xfedcba9876543210ull;  // u64 above INT64_MAX survives
  ASSERT_TRUE(s->record_reserved(*intent, r));

  auto got = s->find(77);
  ASSERT_TRUE(got);
  ASSERT_TRUE(got->has_value());
  ReservationRecord want = r;
  want.origin = ResOrigin::kReserved;
  want.intent_id = *intent;
  want.created = now_;
  EXPECT_EQ(**got, want);

  auto i = s->find_intent(*intent);
  ASSERT_TRUE(i && i->has_value());
  EXPECT_EQ((*i)->state, IntentState::kGranted);
  EXPECT_EQ((*i)->res_id, 77u);
  EXPECT_EQ((*i)->params, "<ReserveParamArray/>");
  EXPECT_TRUE(s->list_pending_intents()->empty());

  // Settled once: a second settlement is refused.
  auto again = s->settle_intent_dropped(*intent, "late");
  EXPECT_EQ(again.code(), basil::Code::kInvalidValue);
  EXPECT_NE(again.message().find("already granted"), std::string::npos) << again.message();
}

TEST_P(StoreContractTest, PendingIntentIsAdoptedOrDroppedByInventory) {
  auto s = make_store();
  ASSERT_TRUE(s);
  auto a = s->record_intent("100", "alice", "p1");
  auto b = s->record_intent("101", "bob", "p2");
  ASSERT_TRUE(a && b);
  auto pending = s->list_pending_intents();
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 2u);
  EXPECT_EQ((*pending)[0].batch_id, "100");
  EXPECT_EQ((*pending)[1].user, "bob");
  EXPECT_EQ((*pending)[0].created, now_);

  ASSERT_TRUE(s->settle_intent_adopted(*a, reservation(5, "100"), "INVENTORY holds resId 5"));
  ASSERT_TRUE(s->settle_intent_dropped(*b, "INVENTORY holds nothing for 101"));
  EXPECT_TRUE(s->list_pending_intents()->empty());

  auto r = s->find(5);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->origin, ResOrigin::kAdopted);
  EXPECT_EQ((*r)->intent_id, *a);
  EXPECT_EQ((*s->find_intent(*a))->state, IntentState::kAdopted);
  EXPECT_EQ((*s->find_intent(*b))->state, IntentState::kDropped);
  EXPECT_EQ((*s->find_intent(*b))->detail, "INVENTORY holds nothing for 101");
  EXPECT_EQ(s->settle_intent_dropped(999, "x").code(), basil::Code::kInvalidValue);
}

TEST_P(StoreContractTest, ReservationSeenFirstTakesTheReserveAnswerLater) {
  auto s = make_store();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->record_seen(reservation(9, "")));
  EXPECT_EQ((*s->find(9))->origin, ResOrigin::kSeen);
  EXPECT_EQ((*s->find(9))->last_seen, now_);
  now_ += 5s;
  ASSERT_TRUE(s->record_seen(reservation(9, "")));  // seen again: last_seen only
  EXPECT_EQ((*s->find(9))->last_seen, now_);
  EXPECT_EQ((*s->find(9))->created, now_ - 5s);

  ASSERT_TRUE(s->record_reserved(std::nullopt, reservation(9, "55")));
  auto r = *s->find(9);
  EXPECT_EQ(r->origin, ResOrigin::kReserved);
  EXPECT_EQ(r->batch_id, "55");
  EXPECT_EQ(r->created, now_ - 5s);
}

TEST_P(StoreContractTest, StateChangesFollowTheStateMachineAndAreAudited) {
  auto s = make_store();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->record_reserved(std::nullopt, reservation(1, "10")));
  ASSERT_TRUE(s->mark_confirmed(1, 4242));
  EXPECT_EQ((*s->find(1))->state, ResState::kConfirmed);
  EXPECT_EQ((*s->find(1))->pagg_id, 4242u);
  EXPECT_EQ((*s->find(1))->confirmed, now_);
  ASSERT_TRUE(s->mark_releasing(1, "job ended"));
  ASSERT_TRUE(s->mark_releasing(1, "claims 2"));  // RELEASE repeated: no change
  now_ += 2s;
  ASSERT_TRUE(s->mark_released(1, "No entry for resId 1"));
  EXPECT_EQ((*s->find(1))->state, ResState::kReleased);
  EXPECT_EQ((*s->find(1))->released, now_);

  auto refused = s->mark_confirmed(1, 1);
  EXPECT_EQ(refused.code(), basil::Code::kInvalidValue);
  EXPECT_NE(refused.message().find("is released"), std::string::npos) << refused.message();
  EXPECT_EQ(s->mark_orphan(1, "x").code(), basil::Code::kInvalidValue);
  EXPECT_EQ(s->mark_gone(404, "x").code(), basil::Code::kInvalidValue);

  auto audit = s->list_audit(WallTime{}, 100);
  ASSERT_TRUE(audit);
  std::vector<std::string> kinds;
  for (const auto& e : *audit) kinds.push_back(e.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"reserve", "state", "state", "release"}));
  const AuditEntry& release = audit->back();
  EXPECT_EQ(release.res_id, 1u);
  EXPECT_EQ(release.batch_id, "10");
  EXPECT_EQ(release.user, "alice");
  EXPECT_EQ(release.nodes.format(), "24-27,40");
  EXPECT_NE(release.detail.find("\"to\":\"released\""), std::string::npos) << release.detail;
}

TEST_P(StoreContractTest, ListsActiveReservationsAndFindsByBatchId) {
  auto s = make_store();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->record_reserved(std::nullopt, reservation(3, "7")));
  ASSERT_TRUE(s->record_reserved(std::nullopt, reservation(4, "7")));  // a stray: same job
  ASSERT_TRUE(s->record_seen(reservation(8, "8")));
  ASSERT_TRUE(s->mark_orphan(8, "no live job"));
  ASSERT_TRUE(s->mark_gone(4, "not in INVENTORY"));
  auto active = s->list_active();
  ASSERT_TRUE(active);
  ASSERT_EQ(active->size(), 2u);
  EXPECT_EQ((*active)[0].res_id, 3u);
  EXPECT_EQ((*active)[1].state, ResState::kOrphan);
  auto by_batch = s->find_by_batch_id("7");
  ASSERT_TRUE(by_batch);
  ASSERT_EQ(by_batch->size(), 2u);
  EXPECT_EQ((*by_batch)[1].state, ResState::kGone);
  EXPECT_TRUE(s->find_by_batch_id("nope")->empty());
  EXPECT_FALSE(s->find(12345)->has_value());
  // An ended id that ALPS hands out again is a new reservation.
  ASSERT_TRUE(s->record_reserved(std::nullopt, reservation(4, "9")));
  EXPECT_EQ((*s->find(4))->state, ResState::kReserved);
  EXPECT_EQ((*s->find(4))->batch_id, "9");
}

TEST_P(StoreContractTest, TouchSeenUpdatesKnownReservationsOnly) {
  auto s = make_store();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->record_reserved(std::nullopt, reservation(3, "7")));
  EXPECT_FALSE((*s->find(3))->last_seen);
  now_ += 10s;
  ASSERT_TRUE(s->touch_seen({3, 999}));
  EXPECT_EQ((*s->find(3))->last_seen, now_);
  EXPECT_FALSE(s->find(999)->has_value());
}

TEST_P(StoreContractTest, JobTableFollowsEachSource) {
  auto s = make_store();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->sync_jobs("squeue", {"1", "2", "3"}));
  ASSERT_TRUE(s->sync_jobs("basild", {"2"}));
  now_ += 30s;
  ASSERT_TRUE(s->sync_jobs("squeue", {"2", "3", "4"}));
  auto live = s->list_jobs();
  ASSERT_TRUE(live);
  std::vector<std::string> ids;
  for (const auto& j : *live) ids.push_back(j.source + ":" + j.job_id);
  EXPECT_EQ(ids, (std::vector<std::string>{"basild:2", "squeue:2", "squeue:3", "squeue:4"}));
  auto all = s->list_jobs(false);
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 5u);
  const JobRecord& ended = (*all)[1];
  EXPECT_EQ(ended.job_id, "1");
  EXPECT_EQ(ended.state, "ended");
  EXPECT_EQ(ended.ended, now_);
  EXPECT_EQ((*all)[2].first_seen, now_ - 30s);
  EXPECT_EQ((*all)[2].last_seen, now_);
  // A job listed again is live again.
  ASSERT_TRUE(s->sync_jobs("squeue", {"1"}));
  EXPECT_EQ(s->list_jobs()->size(), 2u);
}

TEST_P(StoreContractTest, AuditListsTheNewestEntriesFromATimeOldestFirst) {
  auto s = make_store();
  ASSERT_TRUE(s);
  for (int i = 0; i < 5; ++i) {
    AuditEntry e;
    e.kind = "alarm";
    e.detail = "{\"n\":" + std::to_string(i) + "}";
    if (i == 3) e.res_id = 42;
    ASSERT_TRUE(s->audit(e));
    now_ += 1min;
  }
  // From the third entry on (n 2, 3, 4), the newest two.
  auto newest = s->list_audit(now_ - 3min, 2);
  ASSERT_TRUE(newest);
  ASSERT_EQ(newest->size(), 2u);
  EXPECT_EQ((*newest)[0].detail, "{\"n\":3}");
  EXPECT_EQ((*newest)[0].res_id, 42u);
  EXPECT_EQ((*newest)[0].time, now_ - 2min);
  EXPECT_EQ((*newest)[1].detail, "{\"n\":4}");
  EXPECT_FALSE((*newest)[1].res_id);
  // From the beginning, with room for all: every entry, oldest first.
  auto all = s->list_audit(WallTime{}, 10);
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ((*all)[i].detail, "{\"n\":" + std::to_string(i) + "}");
  // From the beginning, two: the last two, not the first.
  auto last_two = s->list_audit(WallTime{}, 2);
  ASSERT_TRUE(last_two);
  ASSERT_EQ(last_two->size(), 2u);
  EXPECT_EQ(last_two->front().detail, "{\"n\":3}");
  AuditEntry empty;
  empty.kind = "note";
  ASSERT_TRUE(s->audit(empty));
  EXPECT_EQ(s->list_audit(now_, 10)->back().detail, "{}");
}

TEST_P(StoreContractTest, NodeEventsAndTimingsRoundTrip) {
  auto s = make_store();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->record_node_events({{0, {}, 31, "state", "UP", "DOWN", "{\"by\":\"admin\"}"},
                                     {0, {}, 4000000000u, "role", "BATCH", "INTERACTIVE", ""}}));
  auto events = s->list_node_events(WallTime{}, 10);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].nid, 31u);
  EXPECT_EQ((*events)[0].to, "DOWN");
  EXPECT_EQ((*events)[0].time, now_);
  EXPECT_EQ((*events)[1].nid, 4000000000u);
  EXPECT_EQ((*events)[1].detail, "{}");

  ASSERT_TRUE(s->save_timings({{"RESERVE", "{\"count\":1}"}, {"QUERY/INVENTORY", "{\"count\":9}"}}));
  ASSERT_TRUE(s->save_timings({{"RESERVE", "{\"count\":2}"}}));
  auto t = s->load_timings();
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, (std::vector<std::pair<std::string, std::string>>{{"QUERY/INVENTORY", "{\"count\":9}"},
                                                                   {"RESERVE", "{\"count\":2}"}}));
}

// "kind res_id batch_id user: detail" for every audit entry.
std::vector<std::string> audit_lines(StateStore& s) {
  std::vector<std::string> out;
  auto entries = s.list_audit(WallTime{}, 1000);
  EXPECT_TRUE(entries) << entries.status().message();
  if (!entries) return out;
  for (const auto& e : *entries) {
    out.push_back(e.kind + " " + (e.res_id ? std::to_string(*e.res_id) : "-") + " " + e.batch_id + " " + e.user +
                  ": " + e.detail);
  }
  return out;
}

TEST_P(StoreContractTest, AuditTrailNamesEveryChangeOfAReservation) {
  auto s = make_store();
  ASSERT_TRUE(s);
  auto i = s->record_intent("20", "alice", "p");
  ASSERT_TRUE(i);
  ASSERT_EQ(*i, 1);
  ASSERT_TRUE(s->record_reserved(*i, reservation(21, "20")));
  ASSERT_TRUE(s->mark_confirmed(21, 7));
  ASSERT_TRUE(s->mark_orphan(21, "no live job"));
  ASSERT_TRUE(s->mark_releasing(21, ""));
  ASSERT_TRUE(s->mark_released(21, "claims 0"));
  ASSERT_TRUE(s->record_seen(reservation(21, "x")));  // ALPS gives the id out again
  ASSERT_TRUE(s->mark_gone(21, "absent"));
  ASSERT_TRUE(s->record_reserved(std::nullopt, reservation(21, "22")));
  ASSERT_TRUE(s->record_seen(reservation(30, "")));
  ASSERT_TRUE(s->record_reserved(std::nullopt, reservation(30, "31")));
  EXPECT_EQ(audit_lines(*s),
            (std::vector<std::string>{
                R"(intent - 20 alice: {"forwarded":false,"intent_id":1,"to":"pending"})",
                R"(reserve 21 20 alice: {"depth":1,"intent_id":1,"nppcu":1,"nppn":32,"origin":"reserved","state":"reserved","width":160})",
                R"(state 21 20 alice: {"from":"reserved","pagg_id":7,"to":"confirmed"})",
                R"(state 21 20 alice: {"detail":"no live job","from":"confirmed","to":"orphan"})",
                R"(state 21 20 alice: {"from":"orphan","to":"releasing"})",
                R"(release 21 20 alice: {"detail":"claims 0","from":"releasing","to":"released"})",
                R"(seen 21 x alice: {"replaces":"released","state":"reserved"})",
                R"(state 21 x alice: {"detail":"absent","from":"reserved","to":"gone"})",
                R"(reserve 21 22 alice: {"depth":1,"nppcu":1,"nppn":32,"origin":"reserved","replaces":"gone","state":"reserved","width":160})",
                R"(seen 30  alice: {"state":"reserved"})",
                R"(reserve 30 31 alice: {"depth":1,"nppcu":1,"nppn":32,"origin":"reserved","state":"reserved","was":"seen","width":160})",
            }));
}

TEST_P(StoreContractTest, ForwardedIntentsUndeliveredReservationIsAStray) {
  auto s = make_store();
  ASSERT_TRUE(s);
  auto f = s->record_intent("40", "bob", "<ReserveParamArray/>", /*forwarded=*/true);
  ASSERT_TRUE(f);
  EXPECT_TRUE((*s->find_intent(*f))->forwarded);
  now_ += 1s;
  ASSERT_TRUE(s->settle_intent_stray(*f, reservation(41, "40"), "its caller never heard"));

  auto r = s->find(41);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->origin, ResOrigin::kAdopted);
  EXPECT_EQ((*r)->intent_id, *f);
  EXPECT_EQ((*r)->created, now_);
  auto i = s->find_intent(*f);
  ASSERT_TRUE(i && i->has_value());
  EXPECT_EQ((*i)->state, IntentState::kStray);
  EXPECT_EQ((*i)->res_id, 41u);
  EXPECT_EQ((*i)->settled, now_);
  EXPECT_EQ((*i)->detail, "its caller never heard");
  EXPECT_TRUE(s->list_pending_intents()->empty());
  EXPECT_EQ(audit_lines(*s),
            (std::vector<std::string>{
                R"(intent - 40 bob: {"forwarded":true,"intent_id":1,"to":"pending"})",
                R"(stray 41 40 alice: {"depth":1,"intent_id":1,"nppcu":1,"nppn":32,"origin":"adopted","state":"reserved","width":160})",
                R"(intent 41 40 bob: {"detail":"its caller never heard","intent_id":1,"to":"stray"})",
            }));

  auto again = s->settle_intent_stray(*f, reservation(41, "40"), "twice");
  EXPECT_EQ(again.code(), basil::Code::kInvalidValue);
  EXPECT_EQ(again.message(), "settle_intent_stray: intent 1 is already stray");
  EXPECT_EQ(s->settle_intent_adopted(7, reservation(42, "40")).message(),
            "settle_intent_adopted: no intent 7 in the state database");
}

TEST_P(StoreContractTest, AdoptForJobMakesASeenReservationItsJobs) {
  auto s = make_store();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->record_seen(reservation(5, "55")));
  ASSERT_TRUE(s->record_reserved(std::nullopt, reservation(6, "66")));
  ASSERT_TRUE(s->adopt_for_job(5, "job 55 is live"));
  EXPECT_EQ((*s->find(5))->origin, ResOrigin::kAdopted);
  ASSERT_TRUE(s->adopt_for_job(5, "again"));  // already basild's: nothing changes
  ASSERT_TRUE(s->adopt_for_job(6, ""));
  EXPECT_EQ((*s->find(6))->origin, ResOrigin::kReserved);
  const auto lines = audit_lines(*s);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines.back(), R"(adopt 5 55 alice: {"detail":"job 55 is live","from":"seen","to":"adopted"})");

  EXPECT_EQ(s->adopt_for_job(404, "x").message(), "adopt_for_job: no active reservation 404 in the state database");
  ASSERT_TRUE(s->mark_gone(5, "absent"));
  EXPECT_EQ(s->adopt_for_job(5, "x").code(), basil::Code::kInvalidValue);
}

TEST_P(StoreContractTest, ConfirmingFollowsTheStateMachine) {
  auto s = make_store();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->record_reserved(std::nullopt, reservation(1, "10")));
  ASSERT_TRUE(s->mark_confirmed(1, 11));
  const std::size_t audited = audit_lines(*s).size();
  now_ += 1s;
  ASSERT_TRUE(s->mark_confirmed(1, 11));  // the same CONFIRM again: nothing changes
  EXPECT_EQ(audit_lines(*s).size(), audited);
  EXPECT_EQ((*s->find(1))->confirmed, now_ - 1s);
  ASSERT_TRUE(s->mark_confirmed(1, 12));  // another pagg: taken
  EXPECT_EQ((*s->find(1))->pagg_id, 12u);
  EXPECT_EQ((*s->find(1))->confirmed, now_);

  ASSERT_TRUE(s->record_reserved(std::nullopt, reservation(2, "20")));
  ASSERT_TRUE(s->mark_orphan(2, "no live job"));
  ASSERT_TRUE(s->mark_confirmed(2, 21));  // an orphan confirmed after all
  EXPECT_EQ((*s->find(2))->state, ResState::kConfirmed);

  ASSERT_TRUE(s->mark_releasing(2, "job ended"));
  auto refused = s->mark_confirmed(2, 22);
  EXPECT_EQ(refused.code(), basil::Code::kInvalidValue);
  EXPECT_EQ(refused.message(), "mark_confirmed: reservation 2 is releasing, it cannot be confirmed");
  auto orphan = s->mark_orphan(2, "x");
  EXPECT_EQ(orphan.message(), "mark_orphan: reservation 2 is releasing, it cannot become orphan");
  EXPECT_EQ(s->mark_confirmed(3, 1).message(), "mark_confirmed: no reservation 3 in the state database");
  EXPECT_EQ(s->mark_released(3, "x").message(), "mark_released: no reservation 3 in the state database");
}

TEST_P(StoreContractTest, OnlyAConfirmedReservationIsSuspendedAndASuspendedOneResumesOrIsReleased) {
  auto s = make_store();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->record_reserved(std::nullopt, reservation(1, "10")));
  EXPECT_EQ(s->mark_suspended(1, "job 10 suspended").message(),
            "mark_suspended: reservation 1 is reserved, it cannot become suspended");
  ASSERT_TRUE(s->mark_confirmed(1, 11));
  ASSERT_TRUE(s->mark_suspended(1, "job 10 suspended"));
  EXPECT_EQ((*s->find(1))->state, ResState::kSuspended);
  EXPECT_EQ((*s->find(1))->pagg_id, 11u);
  ASSERT_TRUE(s->mark_suspended(1, "again"));  // a poll after a restart: nothing changes
  ASSERT_TRUE(s->mark_resumed(1, "job 10 running"));
  EXPECT_EQ((*s->find(1))->state, ResState::kConfirmed);
  EXPECT_EQ((*s->find(1))->pagg_id, 11u) << "the confirmation is kept";
  const auto lines = audit_lines(*s);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_NE(lines[lines.size() - 2].find("suspended"), std::string::npos) << lines[lines.size() - 2];
  EXPECT_NE(lines.back().find("confirmed"), std::string::npos) << lines.back();

  ASSERT_TRUE(s->mark_suspended(1, "job 10 suspended"));
  ASSERT_TRUE(s->mark_releasing(1, "job ended while suspended"));
  EXPECT_EQ(s->mark_resumed(1, "x").message(), "mark_resumed: reservation 1 is releasing, it cannot become confirmed");
  auto active = s->list_active();
  ASSERT_TRUE(active);
  ASSERT_EQ(active->size(), 1u);
  EXPECT_EQ(res_state_name((*active)[0].state), "releasing");
}

TEST_P(StoreContractTest, RefusedChangesChangeNothing) {
  auto s = make_store();
  ASSERT_TRUE(s);
  auto granted = s->record_intent("1", "alice", "p");
  auto pending = s->record_intent("2", "alice", "p");
  ASSERT_TRUE(granted && pending);
  ASSERT_TRUE(s->record_reserved(*granted, reservation(10, "1")));
  ASSERT_TRUE(s->mark_released(10, "claims 0"));
  auto snapshot = [&] {
    std::string out;
    for (const auto& line : audit_lines(*s)) out += line + "\n";
    auto active = s->list_active();
    auto pending_intents = s->list_pending_intents();
    EXPECT_TRUE(active && pending_intents);
    if (!active || !pending_intents) return out;
    for (const auto& r : *active) out += "active " + std::to_string(r.res_id) + "\n";
    for (const auto& i : *pending_intents) out += "pending " + std::to_string(i.id) + "\n";
    for (std::uint64_t id : {10u, 11u, 12u}) out += (*s->find(id)) ? "found " + std::to_string(id) + "\n" : "";
    return out;
  };
  const std::string before = snapshot();
  now_ += 1s;
  EXPECT_EQ(s->record_reserved(*granted, reservation(11, "1")).code(), basil::Code::kInvalidValue);
  EXPECT_EQ(s->record_reserved(99, reservation(11, "1")).code(), basil::Code::kInvalidValue);
  EXPECT_EQ(s->settle_intent_adopted(*granted, reservation(12, "1")).code(), basil::Code::kInvalidValue);
  EXPECT_EQ(s->settle_intent_stray(99, reservation(12, "1"), "x").code(), basil::Code::kInvalidValue);
  EXPECT_EQ(s->settle_intent_dropped(*granted, "x").code(), basil::Code::kInvalidValue);
  EXPECT_EQ(s->mark_confirmed(10, 1).code(), basil::Code::kInvalidValue);
  EXPECT_EQ(s->mark_orphan(10, "x").code(), basil::Code::kInvalidValue);
  EXPECT_EQ(s->mark_releasing(10, "x").code(), basil::Code::kInvalidValue);
  EXPECT_EQ(s->mark_gone(10, "x").code(), basil::Code::kInvalidValue);
  EXPECT_EQ(s->adopt_for_job(10, "x").code(), basil::Code::kInvalidValue);
  EXPECT_EQ(snapshot(), before);
  EXPECT_EQ((*s->find(10))->state, ResState::kReleased);
  EXPECT_EQ((*s->find_intent(*pending))->state, IntentState::kPending);
}

TEST_P(StoreContractTest, TimesAreKeptToTheMillisecond) {
  now_ += 1234us;  // 1.234 ms past a whole second
  const WallTime kept = now_ - 234us;
  auto s = make_store();
  ASSERT_TRUE(s);
  auto i = s->record_intent("1", "alice", "p");
  ASSERT_TRUE(i);
  EXPECT_EQ((*s->find_intent(*i))->created, kept);
  ReservationRecord r = reservation(1, "1");
  r.confirmed = now_ + 5500us;  // as given, to the millisecond
  ASSERT_TRUE(s->record_reserved(*i, r));
  auto got = s->find(1);
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ((*got)->created, kept);
  EXPECT_EQ((*got)->confirmed, kept + 5ms);
  EXPECT_EQ((*s->find_intent(*i))->settled, kept);
  // `since` is taken to the millisecond too: an entry of this millisecond is listed.
  auto audit = s->list_audit(now_ + 500us, 10);
  ASSERT_TRUE(audit);
  ASSERT_EQ(audit->size(), 2u);
  EXPECT_EQ(audit->front().time, kept);
  EXPECT_TRUE(s->list_audit(kept + 1ms, 10)->empty());
}

TEST_P(StoreContractTest, NodeEventsListTheNewestFromATimeOldestFirst) {
  auto s = make_store();
  ASSERT_TRUE(s);
  for (std::uint32_t nid = 1; nid <= 4; ++nid) {
    ASSERT_TRUE(s->record_node_events({{0, {}, nid, "state", "UP", "DOWN", ""}}));
    now_ += 1min;
  }
  // From the second event on (nids 2, 3, 4), the newest two.
  auto newest = s->list_node_events(now_ - 3min, 2);
  ASSERT_TRUE(newest);
  ASSERT_EQ(newest->size(), 2u);
  EXPECT_EQ((*newest)[0].nid, 3u);
  EXPECT_EQ((*newest)[0].id, 3);
  EXPECT_EQ((*newest)[1].nid, 4u);
  EXPECT_EQ(s->list_node_events(WallTime{}, 10)->size(), 4u);
  EXPECT_TRUE(s->list_node_events(WallTime{}, 0)->empty());
  EXPECT_TRUE(s->list_audit(WallTime{}, 0)->empty());
  EXPECT_TRUE(s->list_node_events(now_, 10)->empty());
}

TEST_P(StoreContractTest, EngineAnswersKeepTheLastPerProtocol) {
  auto s = make_store();
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->load_engine_answers()->empty());
  ASSERT_TRUE(s->save_engine_answer("1.3", "<a/>"));
  ASSERT_TRUE(s->save_engine_answer("1.2", "<b/>"));
  ASSERT_TRUE(s->save_engine_answer("1.3", "<c/>"));
  auto answers = s->load_engine_answers();
  ASSERT_TRUE(answers);
  EXPECT_EQ(*answers, (std::vector<std::pair<std::string, std::string>>{{"1.2", "<b/>"}, {"1.3", "<c/>"}}));
}

TEST_P(StoreContractTest, ASoundStorePassesItsQuickCheck) {
  auto s = make_store();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->record_intent("1", "alice", "p"));
  auto qc = s->quick_check();
  ASSERT_TRUE(qc);
  EXPECT_EQ(*qc, std::vector<std::string>{"ok"});
}

}  // namespace
}  // namespace basild
