// The hooks' steps against fake ports: which calls each makes, in which
// order, and how it ends, for every answer basild and scontrol can give.
#include "slurm/hooks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>

#include "tests/slurm/slurm_support.h"
#include "tests/support/files.h"

namespace basild::slurm {
namespace {

using nlohmann::json;

// Answers given in order per "METHOD TARGET"; every call recorded.
class FakePorts : public Ports {
 public:
  std::map<std::string, std::deque<Reply>> answers;
  std::deque<ProgramRun> scontrol_runs;
  std::vector<std::string> calls;  // "POST /v1/reserve {...}", "scontrol update JobId=..."
  std::vector<std::string> lines;

  Reply basild(std::string_view method, std::string_view target, const std::string& body) override {
    const std::string key = std::string(method) + " " + std::string(target);
    calls.push_back(key + (body.empty() ? "" : " " + body));
    auto& q = answers[key];
    if (q.empty()) return {false, "no answer scripted for " + key, 0, {}};
    Reply r = q.front();
    q.pop_front();
    return r;
  }
  // Recorded as the scontrol command line they stand for.
  ProgramRun show_job(const std::string& spec) override { return slurm_call("scontrol -o show job " + spec); }
  ProgramRun update_job(const std::string& spec, bool no_requeue, const std::string& admin_comment) override {
    return slurm_call("scontrol update JobId=" + spec + (no_requeue ? " Requeue=0" : "") +
                      " AdminComment=" + admin_comment);
  }
  ProgramRun slurm_call(const std::string& call) {
    calls.push_back(call);
    if (scontrol_runs.empty()) return {};
    ProgramRun r = scontrol_runs.front();
    scontrol_runs.pop_front();
    return r;
  }
  std::vector<std::string> fail_job_answers;  // in order; "" when none is scripted
  std::string fail_job(std::uint32_t job_id, int exit_code, const std::string& message) override {
    calls.push_back("fail_job " + std::to_string(job_id) + " " + std::to_string(exit_code) + " " + message);
    if (fail_job_answers.empty()) return {};
    std::string r = fail_job_answers.front();
    fail_job_answers.erase(fail_job_answers.begin());
    return r;
  }
  void log(LogLevel level, const std::string& line) override {
    lines.push_back(std::string(log_level_name(level)) + ": " + line);
  }
  // A clock that moves only by pauses.
  std::chrono::steady_clock::time_point clock{};
  std::chrono::milliseconds paused{0};
  void pause(std::chrono::milliseconds d) override {
    clock += d;
    paused += d;
  }
  std::chrono::steady_clock::time_point now() override { return clock; }

  void answer(const std::string& key, unsigned status, const json& body) {
    answers[key].push_back({true, "", status, body.dump()});
  }
  void show(const std::string& output) { scontrol_runs.push_back({true, "", 0, false, output, ""}); }
  void scontrol_ok() { scontrol_runs.push_back({}); }
  std::string log_text() const {
    std::string all;
    for (const auto& l : lines) all += l + "\n";
    return all;
  }
};

JobEnv job15() {
  JobEnv e;
  e.job_id = "15";
  e.user = "alice";
  e.node_list = "nid00008";
  return e;
}

// A site whose prolog CONFIRMs every job with its job id (confirm = "controller").
HookConfig controller() {
  HookConfig c;
  c.confirm = ConfirmAt::kController;
  return c;
}

// Job 15's record as an interactive allocation's (salloc or srun) from session 7679.
std::string interactive_n4() {
  std::string out = fixture("n4");
  const auto at = out.find("BatchFlag=1");
  out.replace(at, 11, "BatchFlag=0");
  return out;
}

const json kReserved = {{"reservation_id", 3}, {"batch_id", "15"}, {"nodes", "8"}, {"state", "reserved"}};
const std::string kReserveCall =
    R"(POST /v1/reserve {"batch_id":"15","job":{"cpus_per_task":1,"node_list":"8","nodes":1,"ntasks":4},"user":"alice"})";

TEST(PrologTest, ReservesConfirmsWithTheJobIdAndNamesTheReservationInTheAdminComment) {
  FakePorts p;
  p.show(fixture("n4"));
  p.answer("POST /v1/reserve", 200, kReserved);
  p.answer("POST /v1/confirm", 200, {{"reservation_id", 3}, {"pagg_id", 15}, {"state", "confirmed"}});
  p.scontrol_ok();
  EXPECT_EQ(run_prolog(job15(), controller(), p), kExitOk) << p.log_text();
  EXPECT_EQ(p.calls, (std::vector<std::string>{
                         "scontrol -o show job 15", kReserveCall,
                         R"(POST /v1/confirm {"pagg_id":15,"reservation_id":3})",
                         "scontrol update JobId=15 AdminComment=basil: reservation 3"}));
}

// scontrol shows the job, basild refuses it for good, the update succeeds.
void script_refusal_of_33_cpus(FakePorts& p) {
  p.show(fixture("n4"));
  p.answer("POST /v1/reserve", 400,
           {{"error", "job refused before ALPS: the job asks 33 CPUs per node"}, {"code", "job_rejected"},
            {"transient", false}});
  p.scontrol_ok();
}

TEST(PrologTest, APermanentRefusalMakesTheJobNonRequeueableWithBasildsSentenceAndEndsItFailed) {
  FakePorts p;
  script_refusal_of_33_cpus(p);
  EXPECT_EQ(run_prolog(job15(), controller(), p), kExitPermanent);
  ASSERT_EQ(p.calls.size(), 4u);
  EXPECT_EQ(p.calls[2],
            "scontrol update JobId=15 Requeue=0 AdminComment=basil: refused: job refused before ALPS: the job asks 33 "
            "CPUs per node");
  EXPECT_EQ(p.calls[3],  // after the comment: the job keeps its reason
            "fail_job 15 2 basil: refused: job refused before ALPS: the job asks 33 CPUs per node");
  EXPECT_NE(p.log_text().find("job ended FAILED with exit code 2"), std::string::npos) << p.log_text();
}

TEST(PrologTest, ACompletionSlurmctldRefusesIsLoggedAndTheExitStatusStillEndsTheJob) {
  FakePorts p;
  script_refusal_of_33_cpus(p);
  p.fail_job_answers.push_back("Access/permission denied");
  EXPECT_EQ(run_prolog(job15(), controller(), p), kExitPermanent);
  EXPECT_NE(p.log_text().find("could not end the job FAILED (Slurm cancels it instead): Access/permission denied"),
            std::string::npos)
      << p.log_text();
}

TEST(PrologTest, BasildUnreachableWithoutAnOutageWaitIsTransientAndKeepsTheJobRequeueable) {
  FakePorts p;
  p.show(fixture("n4"));
  p.answers["POST /v1/reserve"].push_back({false, "/run/basild/control.sock: connection refused", 0, ""});
  p.scontrol_ok();
  HookConfig c = controller();
  c.outage_wait = std::chrono::milliseconds(0);
  EXPECT_EQ(run_prolog(job15(), c, p), kExitTransient);
  EXPECT_EQ(p.calls.back(),
            "scontrol update JobId=15 AdminComment=basil: could not start (transient): basild did not answer: "
            "/run/basild/control.sock: connection refused");
  EXPECT_EQ(p.paused.count(), 0);
}

// basild down for longer than outage_wait: the prolog asks every second,
// says so in the AdminComment, and gives the job back to Slurm at the end.
TEST(PrologTest, BasildUnreachableIsAskedEverySecondForTheOutageWaitThenTransient) {
  FakePorts p;
  p.show(fixture("n4"));
  p.answers["POST /v1/reserve"].push_back({false, "/run/basild/control.sock: connection refused", 0, ""});
  HookConfig c = controller();
  c.outage_wait = std::chrono::seconds(30);
  EXPECT_EQ(run_prolog(job15(), c, p), kExitTransient) << p.log_text();
  EXPECT_EQ(p.paused, std::chrono::seconds(30));
  EXPECT_EQ(std::count(p.calls.begin(), p.calls.end(), kReserveCall), 31);
  ASSERT_GE(p.calls.size(), 3u);
  EXPECT_EQ(p.calls[2], "scontrol update JobId=15 AdminComment=basil: waiting for basild, which did not answer: "
                        "/run/basild/control.sock: connection refused");
  EXPECT_EQ(p.calls.back().rfind(
                "scontrol update JobId=15 AdminComment=basil: could not start (transient): basild did not answer: ", 0),
            0u)
      << p.calls.back();
}

// basild returns while the prolog waits: the job goes on within a second.
TEST(PrologTest, ABasildThatReturnsWhileThePrologWaitsReservesTheJobAtOnce) {
  FakePorts p;
  p.show(fixture("n4"));
  for (int i = 0; i < 4; ++i)
    p.answers["POST /v1/reserve"].push_back({false, "/run/basild/control.sock: no such file", 0, ""});
  p.answer("POST /v1/reserve", 200, kReserved);
  EXPECT_EQ(run_prolog(job15(), HookConfig{}, p), kExitOk) << p.log_text();
  EXPECT_EQ(p.paused, std::chrono::seconds(4));
  EXPECT_EQ(std::count(p.calls.begin(), p.calls.end(), kReserveCall), 5);
  EXPECT_EQ(p.calls.back(), "scontrol update JobId=15 AdminComment=basil: reservation 3");
  EXPECT_NE(p.log_text().find("the wait ended after 4 s"), std::string::npos) << p.log_text();
}

// basild answers, but cannot reach ALPS (its login nodes gone): waited for
// as for basild itself, the comment naming ALPS; an ALPS that answers
// TRANSIENT (below) is no outage and is not waited for.
TEST(PrologTest, AlpsThatBasildCannotReachIsWaitedForAndTheJobReservedWhenItAnswersAgain) {
  FakePorts p;
  p.show(fixture("n4"));
  p.answer("POST /v1/reserve", 503,
           {{"error", "main system unreachable: login1: connection refused"}, {"code", "transport"}, {"transient", true}});
  p.answer("POST /v1/reserve", 503,
           {{"error", "the RESERVE was not answered before its timeout"}, {"code", "timeout"}, {"transient", true}});
  p.answer("POST /v1/reserve", 200, kReserved);
  EXPECT_EQ(run_prolog(job15(), HookConfig{}, p), kExitOk) << p.log_text();
  EXPECT_EQ(p.paused, std::chrono::seconds(2));
  ASSERT_GE(p.calls.size(), 3u);
  EXPECT_EQ(p.calls[2], "scontrol update JobId=15 AdminComment=basil: waiting for ALPS, which basild cannot reach: "
                        "main system unreachable: login1: connection refused");
  EXPECT_EQ(p.calls.back(), "scontrol update JobId=15 AdminComment=basil: reservation 3");
}

TEST(PrologTest, AnAlpsTransientFailureIsTransient) {
  FakePorts p;
  p.show(fixture("n4"));
  p.answer("POST /v1/reserve", 503,
           {{"error", "TRANSIENT ALPS SYSTEM error: busy"}, {"code", "alps_transient"}, {"transient", true}});
  p.scontrol_ok();
  EXPECT_EQ(run_prolog(job15(), controller(), p), kExitTransient);
  for (const auto& c : p.calls) EXPECT_EQ(c.find("fail_job"), std::string::npos) << c;  // Slurm requeues it
  EXPECT_EQ(p.paused.count(), 0);  // no outage: not waited for
}

TEST(PrologTest, AFailedConfirmReleasesTheReservation) {
  FakePorts p;
  p.show(fixture("n4"));
  p.answer("POST /v1/reserve", 200, kReserved);
  p.answer("POST /v1/confirm", 502,
           {{"error", "PERMANENT ALPS BACKEND error: cannot find resId 3"}, {"code", "alps_permanent"},
            {"transient", false}});
  p.answer("POST /v1/release", 200, {{"reservation_id", 3}, {"state", "released"}, {"claims", 0}});
  p.scontrol_ok();
  EXPECT_EQ(run_prolog(job15(), controller(), p), kExitPermanent);
  // The comment naming the reservation was set beside the CONFIRM; the
  // failure's comment comes after it.
  ASSERT_EQ(p.calls.size(), 7u);
  EXPECT_EQ(p.calls[3], "scontrol update JobId=15 AdminComment=basil: reservation 3");
  EXPECT_EQ(p.calls[4], R"(POST /v1/release {"reservation_id":3})");
  EXPECT_NE(p.calls[5].find("Requeue=0 AdminComment=basil: refused: PERMANENT ALPS BACKEND error"), std::string::npos);
  EXPECT_EQ(p.calls[6].rfind("fail_job 15 2 basil: refused: PERMANENT ALPS BACKEND error", 0), 0u) << p.calls[6];
}

// Ports whose update runs `meanwhile` only after Slurm's update: the
// prolog's outcome does not depend on which of the two ends first.
class UpdateFirstPorts : public FakePorts {
 public:
  ProgramRun update_job_while(const std::string& spec, bool no_requeue, const std::string& admin_comment,
                              const std::function<void()>& meanwhile) override {
    ProgramRun r = update_job(spec, no_requeue, admin_comment);
    meanwhile();
    return r;
  }
};

TEST(PrologTest, TheCommentSetBeforeAFailedConfirmEndsAsTheFailuresReason) {
  UpdateFirstPorts p;
  p.show(fixture("n4"));
  p.answer("POST /v1/reserve", 200, kReserved);
  p.answer("POST /v1/confirm", 503, {{"error", "ALPS did not answer"}, {"code", "alps_transient"}, {"transient", true}});
  p.answer("POST /v1/release", 200, {{"reservation_id", 3}, {"state", "released"}, {"claims", 0}});
  p.scontrol_ok();
  p.scontrol_ok();
  EXPECT_EQ(run_prolog(job15(), controller(), p), kExitTransient) << p.log_text();
  ASSERT_EQ(p.calls.size(), 6u) << p.log_text();
  EXPECT_EQ(p.calls[2], "scontrol update JobId=15 AdminComment=basil: reservation 3");
  EXPECT_EQ(p.calls[3], R"(POST /v1/confirm {"pagg_id":15,"reservation_id":3})");
  EXPECT_EQ(p.calls[4], R"(POST /v1/release {"reservation_id":3})");
  EXPECT_EQ(p.calls[5].rfind("scontrol update JobId=15 AdminComment=basil: ", 0), 0u) << p.calls[5];
  EXPECT_EQ(p.calls[5].find("reservation 3"), std::string::npos) << p.calls[5];
  EXPECT_NE(p.calls[5].find("ALPS did not answer"), std::string::npos) << p.calls[5];
}

TEST(PrologTest, AFailedCommentUpdateBesideAGoodConfirmReleasesAndIsTransient) {
  UpdateFirstPorts p;
  p.show(fixture("n4"));
  p.answer("POST /v1/reserve", 200, kReserved);
  p.answer("POST /v1/confirm", 200, {{"reservation_id", 3}, {"pagg_id", 15}, {"state", "confirmed"}});
  p.answer("POST /v1/release", 200, {{"reservation_id", 3}, {"state", "released"}, {"claims", 0}});
  p.scontrol_runs.push_back({true, "", 1, false, "", "slurm_update_job2: Unable to contact slurm controller\n"});
  EXPECT_EQ(run_prolog(job15(), controller(), p), kExitTransient) << p.log_text();
  ASSERT_EQ(p.calls.size(), 5u) << p.log_text();
  EXPECT_EQ(p.calls[3], R"(POST /v1/confirm {"pagg_id":15,"reservation_id":3})");
  EXPECT_EQ(p.calls[4], R"(POST /v1/release {"reservation_id":3})");
  EXPECT_NE(p.log_text().find("Unable to contact slurm controller"), std::string::npos) << p.log_text();
}

TEST(PrologTest, AnEarlierStartsReservationOnOtherNodesIsReleasedAndTheJobRequeued) {
  FakePorts p;
  p.show(fixture("n4"));
  p.answer("POST /v1/reserve", 200,
           {{"reservation_id", 2}, {"batch_id", "15"}, {"nodes", "11"}, {"state", "confirmed"}, {"existing", true}});
  p.answer("POST /v1/release", 200, {{"reservation_id", 2}, {"state", "released"}, {"claims", 0}});
  p.scontrol_ok();
  EXPECT_EQ(run_prolog(job15(), controller(), p), kExitTransient);
  EXPECT_EQ(p.calls[2], R"(POST /v1/release {"reservation_id":2})");
  EXPECT_NE(p.calls[3].find("holds nodes 11, not the job's 8"), std::string::npos) << p.calls[3];
}

// basild answers the job's RESERVE with its earlier reservation while its
// RELEASE loop runs: the prolog waits for the release, then reserves anew.
TEST(PrologTest, AnEarlierStartsReservationStillBeingReleasedIsWaitedForNotUsed) {
  FakePorts p;
  p.show(fixture("n4"));
  json releasing = kReserved;
  releasing["state"] = "releasing";
  releasing["existing"] = true;
  p.answer("POST /v1/reserve", 200, releasing);
  p.answer("POST /v1/reserve", 200, releasing);
  json fresh = kReserved;
  fresh["reservation_id"] = 4;
  p.answer("POST /v1/reserve", 200, fresh);
  p.answer("POST /v1/confirm", 200, {{"reservation_id", 4}, {"pagg_id", 15}, {"state", "confirmed"}});
  EXPECT_EQ(run_prolog(job15(), controller(), p), kExitOk) << p.log_text();
  EXPECT_EQ(p.paused, std::chrono::seconds(2));
  ASSERT_GE(p.calls.size(), 3u);
  EXPECT_EQ(p.calls[2], "scontrol update JobId=15 AdminComment=basil: waiting for the release of reservation 3, an "
                        "earlier start's");
  const std::string confirm3 = R"(POST /v1/confirm {"pagg_id":15,"reservation_id":3})";
  EXPECT_EQ(std::count(p.calls.begin(), p.calls.end(), confirm3), 0);
  EXPECT_EQ(p.calls.back(), "scontrol update JobId=15 AdminComment=basil: reservation 4");
}

TEST(PrologTest, AnEarlierStartsReservationReleasedLongerThanTheOutageWaitIsTransient) {
  FakePorts p;
  p.show(fixture("n4"));
  json releasing = kReserved;
  releasing["state"] = "releasing";
  releasing["existing"] = true;
  for (int i = 0; i < 700; ++i) p.answer("POST /v1/reserve", 200, releasing);
  EXPECT_EQ(run_prolog(job15(), controller(), p), kExitTransient);
  EXPECT_EQ(p.paused, std::chrono::minutes(10));
  EXPECT_EQ(std::count_if(p.calls.begin(), p.calls.end(),
                          [](const std::string& c) { return c.find("confirm") != std::string::npos; }),
            0);
  EXPECT_NE(p.calls.back().find("reservation 3 of job 15 is still being released"), std::string::npos)
      << p.calls.back();
}

// A CONFIRM whose answer basild lost with its link to ALPS (the Cray login
// node in use died while it ran) may have been carried out: it is not sent
// again; the reservation is released and the job reserved and confirmed
// anew, at once, instead of a requeue that holds it for two minutes.
const json kConfirmLost = {{"error", "connection to login1 lost: the request may have been carried out and is not "
                                     "sent again"},
                           {"code", "transport"},
                           {"transient", true}};

TEST(PrologTest, ALostConfirmIsNotSentAgainTheReservationIsReleasedAndTheJobReservedAnew) {
  FakePorts p;
  p.show(fixture("n4"));
  p.answer("POST /v1/reserve", 200, kReserved);
  p.answer("POST /v1/confirm", 503, kConfirmLost);
  p.answer("POST /v1/release", 200, {{"reservation_id", 3}, {"state", "releasing"}, {"claims", 0}});
  json fresh = kReserved;
  fresh["reservation_id"] = 4;
  p.answer("POST /v1/reserve", 200, fresh);
  p.answer("POST /v1/confirm", 200, {{"reservation_id", 4}, {"pagg_id", 15}, {"state", "confirmed"}});
  EXPECT_EQ(run_prolog(job15(), controller(), p), kExitOk) << p.log_text();
  EXPECT_EQ(p.calls, (std::vector<std::string>{
                         "scontrol -o show job 15", kReserveCall,
                         R"(POST /v1/confirm {"pagg_id":15,"reservation_id":3})",
                         "scontrol update JobId=15 AdminComment=basil: reservation 3",
                         R"(POST /v1/release {"reservation_id":3})", kReserveCall,
                         R"(POST /v1/confirm {"pagg_id":15,"reservation_id":4})",
                         "scontrol update JobId=15 AdminComment=basil: reservation 4"}));
  EXPECT_NE(p.log_text().find("the CONFIRM of reservation 3 was lost"), std::string::npos) << p.log_text();
}

TEST(PrologTest, ConfirmsLostThreeTimesOrARefusedReleaseEndTheStartAsTransient) {
  FakePorts lost;
  lost.show(fixture("n4"));
  for (int i = 0; i < 3; ++i) {
    json r = kReserved;
    r["reservation_id"] = 3 + i;
    lost.answer("POST /v1/reserve", 200, r);
    lost.answer("POST /v1/confirm", 503, kConfirmLost);
    lost.answer("POST /v1/release", 200, {{"reservation_id", 3 + i}, {"state", "releasing"}, {"claims", 0}});
  }
  EXPECT_EQ(run_prolog(job15(), controller(), lost), kExitTransient) << lost.log_text();
  EXPECT_EQ(std::count_if(lost.calls.begin(), lost.calls.end(),
                          [](const std::string& c) { return c.rfind("POST /v1/confirm", 0) == 0; }),
            3);
  EXPECT_EQ(lost.answers["POST /v1/release"].size(), 0u) << "every reservation released";

  FakePorts refused;
  refused.show(fixture("n4"));
  refused.answer("POST /v1/reserve", 200, kReserved);
  refused.answer("POST /v1/confirm", 503, kConfirmLost);
  refused.answer("POST /v1/release", 503, kConfirmLost);
  refused.answer("POST /v1/release", 503, kConfirmLost);
  EXPECT_EQ(run_prolog(job15(), controller(), refused), kExitTransient) << refused.log_text();
  EXPECT_EQ(std::count_if(refused.calls.begin(), refused.calls.end(),
                          [](const std::string& c) { return c.rfind("POST /v1/reserve", 0) == 0; }),
            1)
      << "a reservation that may be confirmed and is not released is never confirmed again";
}

TEST(PrologTest, ARepeatedPrologDoesNotConfirmTwice) {
  FakePorts p;
  p.show(fixture("n4"));
  json existing = kReserved;
  existing["state"] = "confirmed";
  existing["pagg_id"] = 15;
  existing["existing"] = true;
  p.answer("POST /v1/reserve", 200, existing);
  p.scontrol_ok();
  EXPECT_EQ(run_prolog(job15(), controller(), p), kExitOk) << p.log_text();
  EXPECT_EQ(p.calls.size(), 3u);  // show, reserve, update: no CONFIRM
}

TEST(PrologTest, ABatchJobIsOnlyReservedByDefaultItsNodeConfirmsIt) {
  FakePorts p;
  p.show(fixture("n4"));
  p.answer("POST /v1/reserve", 200, kReserved);
  p.scontrol_ok();
  EXPECT_EQ(run_prolog(job15(), HookConfig{}, p), kExitOk) << p.log_text();
  EXPECT_EQ(p.calls, (std::vector<std::string>{"scontrol -o show job 15", kReserveCall,
                                               "scontrol update JobId=15 AdminComment=basil: reservation 3"}));
}

TEST(PrologTest, AnInteractiveAllocationIsConfirmedWithItsSessionByDefault) {
  FakePorts p;
  p.show(interactive_n4());
  p.answer("POST /v1/reserve", 200, kReserved);
  p.answer("POST /v1/confirm", 200, {{"reservation_id", 3}, {"pagg_id", 7679}, {"state", "confirmed"}});
  p.scontrol_ok();
  EXPECT_EQ(run_prolog(job15(), HookConfig{}, p), kExitOk) << p.log_text();
  EXPECT_EQ(p.calls, (std::vector<std::string>{"scontrol -o show job 15", kReserveCall,
                                               R"(POST /v1/confirm {"pagg_id":7679,"reservation_id":3})",
                                               "scontrol update JobId=15 AdminComment=basil: reservation 3"}));
}

TEST(PrologTest, AnInteractiveAllocationWithoutASessionFailsForGoodBeforeAnyReserve) {
  FakePorts p;
  std::string record = interactive_n4();
  record.erase(record.find("AllocNode:Sid=localhost:7679"), 29);
  p.show(record);
  p.scontrol_ok();
  EXPECT_EQ(run_prolog(job15(), HookConfig{}, p), kExitPermanent) << p.log_text();
  ASSERT_GE(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[1], "scontrol update JobId=15 Requeue=0 AdminComment=basil: refused: Slurm names no session "
                        "(AllocNode:Sid) for interactive job 15: its reservation could not be confirmed");
}

TEST(PrologTest, ASessionThatIsNoNumberFailsForGoodBeforeAnyReserve) {
  FakePorts p;
  std::string record = interactive_n4();
  record.replace(record.find("AllocNode:Sid=localhost:7679"), 28, "AllocNode:Sid=localhost:x");
  p.show(record);
  p.scontrol_ok();
  EXPECT_EQ(run_prolog(job15(), HookConfig{}, p), kExitPermanent) << p.log_text();
  ASSERT_GE(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[1], "scontrol update JobId=15 Requeue=0 AdminComment=basil: refused: cannot read how the job "
                        "starts: scontrol's AllocNode:Sid ends in \"x\", not a session id");
}

TEST(PrologTest, AJobNameImitatingBatchFlagIsRefusedNotConfirmedWithItsSession) {
  FakePorts p;
  std::string record = fixture("n4");
  record.replace(record.find("JobName=") + 8, 0, "x BatchFlag=0 ");
  p.show(record);
  p.scontrol_ok();
  EXPECT_EQ(run_prolog(job15(), HookConfig{}, p), kExitPermanent) << p.log_text();
  EXPECT_EQ(p.calls.size(), 3u) << p.log_text();  // show, update, fail_job: nothing reserved
  EXPECT_NE(p.calls[1].find("different BatchFlag or AllocNode:Sid fields"), std::string::npos) << p.calls[1];
}

TEST(PrologTest, AJobArraysTaskIsShownAndUpdatedAlone) {
  FakePorts p;
  JobEnv e = job15();
  e.array_task = "15_3";
  p.show(fixture("n4"));
  p.answer("POST /v1/reserve", 200, kReserved);
  p.answer("POST /v1/confirm", 200, {{"reservation_id", 3}, {"pagg_id", 15}, {"state", "confirmed"}});
  p.scontrol_ok();
  EXPECT_EQ(run_prolog(e, controller(), p), kExitOk) << p.log_text();
  EXPECT_EQ(p.calls.front(), "scontrol -o show job 15_3");
  EXPECT_EQ(p.calls.back(), "scontrol update JobId=15_3 AdminComment=basil: reservation 3");
}

TEST(PrologTest, ScontrolThatFailsIsTransient) {
  FakePorts p;
  p.scontrol_runs.push_back({true, "", 1, false, "", "slurm_load_jobs error: Unable to contact slurm controller\n"});
  p.scontrol_ok();
  EXPECT_EQ(run_prolog(job15(), controller(), p), kExitTransient);
  EXPECT_NE(p.calls.back().find("show job 15 failed: exited 1: slurm_load_jobs error: Unable to contact"),
            std::string::npos)
      << p.calls.back();
}

TEST(PrologTest, AJobRecordCutAtTheLimitFailsPermanentlySayingTruncated) {
  FakePorts p;
  ProgramRun cut{true, "", 0, false, fixture("combo_tpn4_c2_tpc1").substr(0, 300), ""};
  cut.truncated = true;
  p.scontrol_runs.push_back(cut);
  p.scontrol_ok();
  EXPECT_EQ(run_prolog(job15(), controller(), p), kExitPermanent);
  EXPECT_EQ(p.calls.size(), 3u) << "nothing reached basild";
  EXPECT_NE(p.calls[1].find("Requeue=0 AdminComment=basil: refused: show job 15 failed: the job's record was "
                            "truncated: Slurm's answer passed basil-slurm's limit of 16 MiB"),
            std::string::npos)
      << p.calls[1];
}

TEST(PrologTest, AJobImitatingScontrolsFieldsIsRefused) {
  FakePorts p;
  JobEnv e = job15();
  e.job_id = "31";
  e.node_list = "nid00011";
  p.show(fixture("forged_block_differs"));
  p.scontrol_ok();
  EXPECT_EQ(run_prolog(e, controller(), p), kExitPermanent);
  EXPECT_EQ(p.calls.size(), 3u);  // nothing reached basild
  EXPECT_EQ(p.calls.back().rfind("fail_job 31 2 basil: refused: cannot read the job's shape", 0), 0u) << p.calls.back();
  EXPECT_NE(p.calls[1].find("Requeue=0 AdminComment=basil: refused: cannot read the job's shape: scontrol's "
                                "output holds different job shapes"),
            std::string::npos)
      << p.calls.back();
}

TEST(PrologTest, WithoutTheAdminCommentTheTasksCannotLearnTheReservationSoItIsReleased) {
  FakePorts p;
  p.show(fixture("n4"));
  p.answer("POST /v1/reserve", 200, kReserved);
  p.answer("POST /v1/confirm", 200, {{"reservation_id", 3}, {"pagg_id", 15}, {"state", "confirmed"}});
  p.scontrol_runs.push_back({true, "", 1, false, "", "Invalid job id specified\n"});
  p.answer("POST /v1/release", 200, {{"reservation_id", 3}, {"state", "released"}, {"claims", 0}});
  EXPECT_EQ(run_prolog(job15(), controller(), p), kExitTransient);
  EXPECT_EQ(p.calls.back(), R"(POST /v1/release {"reservation_id":3})");
}

TEST(EpilogTest, HandsTheJobsReleaseToBasildInOneCall) {
  FakePorts p;
  p.answer("POST /v1/release", 200,
           {{"batch_id", "15"},
            {"reservations", {{{"reservation_id", 3}, {"state", "releasing"}}, {{"reservation_id", 5}, {"state", "releasing"}}}}});
  EXPECT_EQ(run_epilog(job15(), p), kExitOk) << p.log_text();
  EXPECT_EQ(p.calls, (std::vector<std::string>{R"(POST /v1/release {"batch_id":"15"})"}));
  EXPECT_NE(p.log_text().find("job 15 epilog: reservation 3 releasing"), std::string::npos) << p.log_text();
  EXPECT_NE(p.log_text().find("job 15 epilog: reservation 5 releasing"), std::string::npos) << p.log_text();
}

TEST(EpilogTest, AJobThatNeverGotAReservationSucceeds) {
  FakePorts p;
  p.answer("POST /v1/release", 200, {{"batch_id", "15"}, {"reservations", json::array()}});
  EXPECT_EQ(run_epilog(job15(), p), kExitOk);
  EXPECT_EQ(p.calls.size(), 1u);
  EXPECT_NE(p.log_text().find("the job holds no reservation"), std::string::npos);
}

TEST(EpilogTest, BasildRefusingTheReleaseIsTransientWithItsSentence) {
  FakePorts p;
  p.answer("POST /v1/release", 503,
           {{"error", "state database unavailable: disk I/O error"}, {"code", "busy"}, {"transient", true}});
  EXPECT_EQ(run_epilog(job15(), p), kExitTransient);
  EXPECT_NE(p.log_text().find("error: job 15 epilog: cannot hand the job's release to basild"), std::string::npos)
      << p.log_text();
  EXPECT_NE(p.log_text().find("disk I/O error"), std::string::npos) << p.log_text();
}

TEST(EpilogTest, BasildUnreachableIsReported) {
  FakePorts p;
  EXPECT_EQ(run_epilog(job15(), p), kExitTransient);
  EXPECT_NE(p.log_text().find("cannot hand the job's release to basild"), std::string::npos) << p.log_text();
}

TEST(TaskPrologTest, ExportsTheReservationOfTheAdminComment) {
  FakePorts p;
  p.show(fixture("admin_comment_reservation"));
  JobEnv e;
  e.job_id = "48";
  std::string out;
  EXPECT_EQ(run_task_prolog(e, p, out), kExitOk);
  EXPECT_EQ(out, "export BASIL_RESERVATION_ID=42\nexport BASIL_RESERVATION_JOB=48\n");
  EXPECT_EQ(p.calls, std::vector<std::string>{"scontrol -o show job 48"});
}

TEST(TaskPrologTest, ATaskThatInheritedItsJobsReservationAsksSlurmNothing) {
  FakePorts p;  // no record to show: a call would find nothing
  JobEnv e;
  e.job_id = "48";
  e.exported_reservation = 42;
  std::string out;
  EXPECT_EQ(run_task_prolog(e, p, out), kExitOk);
  EXPECT_EQ(out, "export BASIL_RESERVATION_ID=42\nexport BASIL_RESERVATION_JOB=48\n");
  EXPECT_TRUE(p.calls.empty()) << p.calls.front();
}

TEST(TaskPrologTest, PrintsNothingButSucceedsWhenThereIsNoneOrItIsAmbiguous) {
  for (auto [file, id] : {std::pair{"n4", "15"}, std::pair{"admin_comment_forged_differs", "49"}}) {
    FakePorts p;
    p.show(fixture(file));
    JobEnv e;
    e.job_id = id;
    std::string out;
    EXPECT_EQ(run_task_prolog(e, p, out), kExitOk) << file;
    EXPECT_EQ(out, "") << file;
  }
  FakePorts p;
  p.scontrol_runs.push_back({false, "cannot run /usr/bin/scontrol: No such file or directory", 0, false, "", ""});
  std::string out;
  EXPECT_EQ(run_task_prolog(job15(), p, out), kExitOk);
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace basild::slurm
