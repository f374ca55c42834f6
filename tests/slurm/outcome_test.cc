// basild's answers as verdicts, and how the prolog ends for each.
#include "slurm/outcome.h"

#include <gtest/gtest.h>

namespace basild::slurm {
namespace {

struct OutcomeCase {
  const char* what;
  Reply reply;
  Verdict verdict;
  const char* sentence;
  const char* code;
};

// Bodies as basild writes them (basild/daemon/replies.cc, basild/core/job_json.cc).
const OutcomeCase kOutcomeCases[] = {
    {"a reservation", {true, "", 200, R"({"reservation_id":3,"batch_id":"15","nodes":"8","state":"reserved"})"},
     Verdict::kOk, "", ""},
    {"basild not running", {false, "/run/basild/control.sock: no such file (is basild running?)", 0, ""},
     Verdict::kTransient, "basild did not answer: /run/basild/control.sock: no such file (is basild running?)", ""},
    {"a job basild refuses before ALPS",
     {true, "", 400,
      R"({"error":"job refused before ALPS: the job asks 33 CPUs per node","code":"job_rejected","reason":"exceeds_visible","transient":false})"},
     Verdict::kPermanent, "job refused before ALPS: the job asks 33 CPUs per node", "job_rejected"},
    {"a listed node down now",
     {true, "", 503,
      R"({"error":"job refused before ALPS: node 8 of the job's node list is not UP now","code":"job_rejected","reason":"node_unavailable","transient":true})"},
     Verdict::kTransient, "job refused before ALPS: node 8 of the job's node list is not UP now", "job_rejected"},
    {"ALPS PERMANENT",
     {true, "", 502,
      R"({"error":"PERMANENT ALPS BACKEND error: ALPS error: apsched: at least resid 3 conflicts","code":"alps_permanent","transient":false})"},
     Verdict::kPermanent, "PERMANENT ALPS BACKEND error: ALPS error: apsched: at least resid 3 conflicts",
     "alps_permanent"},
    {"ALPS TRANSIENT",
     {true, "", 503,
      R"({"error":"TRANSIENT ALPS SYSTEM error: ALPS is busy","code":"alps_transient","transient":true})"},
     Verdict::kTransient, "TRANSIENT ALPS SYSTEM error: ALPS is busy", "alps_transient"},
    {"no INVENTORY yet", {true, "", 503, R"({"result":6,"error":"no INVENTORY yet: a job's geometry needs one"})"},
     Verdict::kTransient, "no INVENTORY yet: a job's geometry needs one", ""},
    {"a bad key", {true, "", 400, R"({"error":"reserve: unknown key","code":"invalid_value","transient":false})"},
     Verdict::kPermanent, "reserve: unknown key", "invalid_value"},
    {"a basild without the route", {true, "", 404, R"({"result":3,"error":"no such route: /v1/reserve"})"},
     Verdict::kTransient, "no such route: /v1/reserve", ""},
    {"a peer basild refuses", {true, "", 403, R"({"result":7,"error":"forbidden"})"}, Verdict::kTransient, "forbidden",
     ""},
    {"an answer that is not JSON", {true, "", 200, "<html>"}, Verdict::kTransient,
     "basild's answer (HTTP 200) is not a JSON object", ""},
    {"an error that is not JSON", {true, "", 502, "bad gateway"}, Verdict::kPermanent, "basild answered HTTP 502", ""},
};

TEST(OutcomeTest, EachAnswerHasItsVerdictAndSentence) {
  for (const auto& c : kOutcomeCases) {
    SCOPED_TRACE(c.what);
    const Outcome o = classify(c.reply);
    EXPECT_EQ(verdict_name(o.verdict), verdict_name(c.verdict));
    EXPECT_EQ(o.sentence, c.sentence);
    EXPECT_EQ(o.code, c.code);
  }
}

// An outage is basild silent, or basild saying that ALPS is; every other
// answer, failures among them, is none.
TEST(OutcomeTest, AnOutageIsNoAnswerOrALinkToAlpsThatIsDown) {
  EXPECT_EQ(outage({false, "/run/basild/control.sock: connection refused", 0, ""}),
            "basild, which did not answer: /run/basild/control.sock: connection refused");
  EXPECT_EQ(outage({true, "", 503,
                    R"({"error":"main system unreachable: login1: no route","code":"transport","transient":true})"}),
            "ALPS, which basild cannot reach: main system unreachable: login1: no route");
  EXPECT_EQ(outage({true, "", 503, R"({"error":"no answer in 60 s","code":"timeout","transient":true})"}),
            "ALPS, which basild cannot reach: no answer in 60 s");
  for (const auto& c : kOutcomeCases) {
    SCOPED_TRACE(c.what);
    if (c.reply.reached) {
      EXPECT_EQ(outage(c.reply), std::nullopt);
    }
  }
  EXPECT_EQ(outage({true, "", 400, R"({"error":"bad","code":"transport","transient":false})"}), std::nullopt);
}

TEST(OutcomeTest, ReleaseIsDoneWhenReleasedReleasingOrUnknown) {
  const std::pair<Reply, bool> cases[] = {
      {{true, "", 200, R"({"reservation_id":3,"state":"released","claims":0})"}, true},
      {{true, "", 200, R"({"reservation_id":3,"state":"releasing","claims":1})"}, true},
      {{true, "", 404,
        R"({"reservation_id":3,"state":"unknown","error":"release: reservation 3 is unknown","code":"reservation_unknown","transient":false})"},
       true},
      {{true, "", 404, R"({"result":3,"error":"no such route: /v1/release"})"}, false},
      {{false, "timed out", 0, ""}, false},
      {{true, "", 502, R"({"error":"PERMANENT ALPS BACKEND error: x","code":"alps_permanent","transient":false})"},
       false},
  };
  for (const auto& [reply, done] : cases) EXPECT_EQ(release_done(classify(reply)), done) << reply.body;
}

TEST(OutcomeTest, PrologEndsAsTheVerdictSays) {
  const PrologEnd ok = prolog_success(42);
  EXPECT_EQ(ok.exit_code, kExitOk);
  EXPECT_EQ(ok.admin_comment, "basil: reservation 42");
  EXPECT_FALSE(ok.no_requeue);

  const PrologEnd refused = prolog_failure(Verdict::kPermanent, "job refused before ALPS: too many CPUs");
  EXPECT_EQ(refused.exit_code, kExitPermanent);
  EXPECT_EQ(refused.admin_comment, "basil: refused: job refused before ALPS: too many CPUs");
  EXPECT_TRUE(refused.no_requeue);  // a batch job is cancelled, not requeued to fail again

  const PrologEnd later = prolog_failure(Verdict::kTransient, "basild did not answer: timed out");
  EXPECT_EQ(later.exit_code, kExitTransient);
  EXPECT_EQ(later.admin_comment, "basil: could not start (transient): basild did not answer: timed out");
  EXPECT_FALSE(later.no_requeue);  // a batch job is requeued
}

TEST(OutcomeTest, TheCommentIsOneLineOfBoundedLength) {
  EXPECT_EQ(one_line("ALPS said:\n\"no\"\tthen\x7f"), "ALPS said: \"no\" then ");
  EXPECT_EQ(one_line(std::string(5000, 'x')).size(), 1000u);
  // Cut before a character, never inside one: 999 bytes then a 2-byte character.
  const std::string text = std::string(999, 'a') + "\xc3\xa9" + "b";
  EXPECT_EQ(one_line(text), std::string(999, 'a'));
}

}  // namespace
}  // namespace basild::slurm
