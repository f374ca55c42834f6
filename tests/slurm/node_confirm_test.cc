// The CONFIRM a batch job's node makes (basil-slurm node-confirm), through
// basild's control socket or the node's own apbasil, over fake ports.
#include "slurm/node_confirm.h"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

namespace basild::slurm {
namespace {

using nlohmann::json;

class ConfirmPorts : public Ports {
 public:
  std::deque<Reply> basild_answers;
  std::deque<ProgramRun> apbasil_runs;
  std::vector<std::string> calls;
  std::vector<std::string> lines;

  Reply basild(std::string_view method, std::string_view target, const std::string& body) override {
    calls.push_back(std::string(method) + " " + std::string(target) + " " + body);
    if (basild_answers.empty()) return {false, "no answer scripted", 0, {}};
    Reply r = basild_answers.front();
    basild_answers.pop_front();
    return r;
  }
  ProgramRun show_job(const std::string&) override { return {}; }
  ProgramRun update_job(const std::string&, bool, const std::string&) override { return {}; }
  std::string fail_job(std::uint32_t, int, const std::string&) override { return {}; }
  void log(LogLevel level, const std::string& line) override {
    lines.push_back(std::string(log_level_name(level)) + ": " + line);
  }
  ProgramRun apbasil(const std::string& path, const std::string& request) override {
    calls.push_back(path + " <- " + request);
    if (apbasil_runs.empty()) return {false, "no run scripted", -1, false, {}, {}};
    ProgramRun r = apbasil_runs.front();
    apbasil_runs.pop_front();
    return r;
  }
  void pause(std::chrono::milliseconds d) override { calls.push_back("pause " + std::to_string(d.count()) + "ms"); }

  void answer(unsigned status, const json& body) { basild_answers.push_back({true, "", status, body.dump()}); }
  void apbasil_says(const std::string& xml) { apbasil_runs.push_back({true, "", 0, false, xml, ""}); }
  std::string log_text() const {
    std::string all;
    for (const auto& l : lines) all += l + "\n";
    return all;
  }
};

NodeConfirm confirm15(std::optional<std::string> apbasil = std::nullopt) {
  return {.job_id = "15", .reservation_id = 3, .pagg_id = 7001, .apbasil = std::move(apbasil)};
}

const char* kConfirmed =
    R"(<?xml version="1.0"?><BasilResponse protocol="1.0"><ResponseData status="SUCCESS" method="CONFIRM">)"
    R"(<Confirmed/></ResponseData></BasilResponse>)";

std::string failure(const char* error_class, const char* message) {
  return std::string(R"(<?xml version="1.0"?><BasilResponse protocol="1.0"><ResponseData status="FAILURE" )") +
         "error_class=\"" + error_class + R"(" error_source="BACKEND" method="CONFIRM"><Message severity="ERROR">)" +
         message + "</Message></ResponseData></BasilResponse>";
}

TEST(NodeConfirmTest, ThroughBasildItNamesTheJobSoBasildConfirmsOnlyThatJobsReservation) {
  ConfirmPorts p;
  p.answer(200, {{"reservation_id", 3}, {"pagg_id", 7001}, {"state", "confirmed"}});
  EXPECT_EQ(run_node_confirm(confirm15(), p), kExitOk) << p.log_text();
  EXPECT_EQ(p.calls, (std::vector<std::string>{R"(POST /v1/confirm {"batch_id":"15","pagg_id":7001,"reservation_id":3})"}));
  EXPECT_NE(p.log_text().find("info: job 15 node-confirm: reservation 3 confirmed with pagg_id 7001 through basild"),
            std::string::npos) << p.log_text();
}

TEST(NodeConfirmTest, AnotherJobsReservationOrNoneAtBasildIsPermanent) {
  for (unsigned status : {403u, 404u}) {
    ConfirmPorts p;
    p.answer(status, {{"error", "reservation 3 is job 16's, not job 15's"}});
    EXPECT_EQ(run_node_confirm(confirm15(), p), kExitPermanent) << status;
    EXPECT_NE(p.log_text().find("permanent failure: the CONFIRM of reservation 3 through basild failed: reservation 3 "
                                "is job 16's, not job 15's"),
              std::string::npos)
        << p.log_text();
  }
}

TEST(NodeConfirmTest, BasildUnreachableOrAlpsTransientIsTransient) {
  ConfirmPorts p;
  p.basild_answers.push_back({false, "/run/basild/control.sock: connection refused", 0, ""});
  EXPECT_EQ(run_node_confirm(confirm15(), p), kExitTransient);
  ConfirmPorts q;
  q.answer(503, {{"error", "ALPS: busy"}, {"code", "alps_transient"}, {"transient", true}});
  EXPECT_EQ(run_node_confirm(confirm15(), q), kExitTransient);
}

TEST(NodeConfirmTest, TheNodesApbasilGetsABasil10ConfirmWithTheJobsNameAndContainer) {
  const std::string xml = node_confirm_request(confirm15());
  EXPECT_NE(xml.find(R"(protocol="1.0")"), std::string::npos) << xml;
  EXPECT_NE(xml.find(R"(method="CONFIRM")"), std::string::npos) << xml;
  EXPECT_NE(xml.find(R"(reservation_id="3")"), std::string::npos) << xml;
  EXPECT_NE(xml.find(R"(admin_cookie="7001")"), std::string::npos) << xml;
  EXPECT_NE(xml.find(R"(job_name="15")"), std::string::npos) << xml;
  ConfirmPorts p;
  p.apbasil_says(kConfirmed);
  EXPECT_EQ(run_node_confirm(confirm15("/opt/cray/alps/default/bin/apbasil"), p), kExitOk) << p.log_text();
  EXPECT_EQ(p.calls, (std::vector<std::string>{"/opt/cray/alps/default/bin/apbasil <- " + xml}));
}

TEST(NodeConfirmTest, ACannotFindResIdIsAskedAgainAboutFourSecondsThenPermanent) {
  ConfirmPorts p;
  for (int i = 0; i < 5; ++i) p.apbasil_says(failure("PERMANENT", "ALPS error: cannot find resId 3"));
  EXPECT_EQ(run_node_confirm(confirm15("/usr/bin/apbasil"), p), kExitPermanent);
  std::vector<std::string> pauses;
  for (const auto& c : p.calls)
    if (c.starts_with("pause")) pauses.push_back(c);
  EXPECT_EQ(pauses, (std::vector<std::string>{"pause 250ms", "pause 500ms", "pause 1000ms", "pause 2000ms"}));
  EXPECT_EQ(p.calls.size(), 9u);

  ConfirmPorts q;  // found on the second try
  q.apbasil_says(failure("PERMANENT", "ALPS error: cannot find resId 3"));
  q.apbasil_says(kConfirmed);
  EXPECT_EQ(run_node_confirm(confirm15("/usr/bin/apbasil"), q), kExitOk) << q.log_text();
}

TEST(NodeConfirmTest, ApbasilsOtherFailuresAreClassedAsAlpsClassesThem) {
  ConfirmPorts p;
  p.apbasil_says(failure("TRANSIENT", "apsched busy"));
  EXPECT_EQ(run_node_confirm(confirm15("/usr/bin/apbasil"), p), kExitTransient);
  EXPECT_EQ(p.calls.size(), 1u);  // no retry
  ConfirmPorts q;
  q.apbasil_says(failure("PERMANENT", "reservation 3 already confirmed"));
  EXPECT_EQ(run_node_confirm(confirm15("/usr/bin/apbasil"), q), kExitPermanent);
  EXPECT_NE(q.log_text().find("ALPS: "), std::string::npos) << q.log_text();
}

TEST(NodeConfirmTest, AnApbasilThatCrashesHangsOrPrintsNoBasilIsTransient) {
  EXPECT_EQ(classify_apbasil({false, "No such file or directory", -1, false, {}, {}}).outcome.verdict,
            Verdict::kTransient);
  EXPECT_EQ(classify_apbasil({true, "", -1, true, {}, {}}).outcome.verdict, Verdict::kTransient);
  const auto garbage = classify_apbasil({true, "", 139, false, "<html>", "Segmentation fault"});
  EXPECT_EQ(garbage.outcome.verdict, Verdict::kTransient);
  EXPECT_NE(garbage.outcome.sentence.find("exit status 139, Segmentation fault"), std::string::npos)
      << garbage.outcome.sentence;
}

}  // namespace
}  // namespace basild::slurm
