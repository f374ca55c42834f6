// basild behind apbasil_proxy as a Slurm 17.11 select/alps controller and
// its job steps use it (tests/support/slurm_requests.h): what a site would
// hit. Every call here goes through POST /v1/basil, the proxy's path.
#include <gtest/gtest.h>

#include "basild/daemon/daemon_support.h"
#include "support/slurm_requests.h"

namespace basild::testing {
namespace {

namespace slurm = basil::testing::slurm;

basil::Response forward(const Daemon& d, const std::string& xml) {
  control::Client c(d.socket());
  auto r = c.request("POST", "/v1/basil?failures=basil", xml, "application/xml", 30s);
  EXPECT_TRUE(r.ok()) << r.message;
  auto resp = basil::decode_response(r.body);
  EXPECT_TRUE(resp) << resp.status().to_string() << "\n" << r.body;
  return resp ? *resp : basil::Response{};
}

std::uint64_t metric(const Daemon& d, const std::string& name) {
  control::Client c(d.socket());
  const auto text = c.request("GET", "/metrics", "", "", 10s).body;
  const auto at = text.find("\n" + name + " ");
  return at == std::string::npos ? ~0ull : std::stoull(text.substr(at + name.size() + 2));
}

// A job's life as Slurm drives it: RESERVE (slurmctld), ENGINE and CONFIRM
// (the step starts), ENGINE and RELEASE (the step ends). Returns the
// reservation id.
std::uint64_t run_job(const Daemon& d, const std::string& job_id, bool with_aprun = false) {
  const auto reserved = forward(d, slurm::reserve(job_id, "alice", 32));
  EXPECT_TRUE(reserved.ok());
  const auto res_id = std::get<basil::Reserved>(reserved.body).reservation_id;
  EXPECT_TRUE(forward(d, slurm::engine()).ok());
  EXPECT_TRUE(forward(d, slurm::confirm(res_id, job_id, 4000 + res_id)).ok());
  std::string apid;
  if (with_aprun) apid = emulator_admin(d.emu(), "app start --resid " + std::to_string(res_id));
  EXPECT_TRUE(forward(d, slurm::engine()).ok());
  EXPECT_TRUE(forward(d, slurm::release(res_id)).ok());
  if (with_aprun) emulator_admin(d.emu(), "app end --apid " + apid);
  return res_id;
}

TEST(SlurmChainTest, AJobsEndThroughTheProxyIsLearntAndNoFalseVanishedAlarm) {
  Daemon d("chain-release");
  d.start();
  const auto quick = run_job(d, "101");              // claims 0 at once: released
  const auto with_claims = run_job(d, "102", true);  // claims 1, then the aprun ends
  EXPECT_EQ(d.events_of("release", quick).size(), 1u) << d.get("/v1/events").dump();
  // Two INVENTORYs later both are gone from ALPS, and basild knew why.
  d.wait_for_poll();
  d.wait_for_poll();
  EXPECT_TRUE(d.alps_reservations().empty());
  EXPECT_TRUE(d.basild_reservations().empty()) << d.get("/v1/reservations").dump();
  EXPECT_EQ(d.events_of("release", with_claims).size(), 1u) << d.get("/v1/events").dump();
  EXPECT_EQ(metric(d, "basild_reservations_gone_total"), 0u);
  EXPECT_EQ(d.log().find("B0232"), std::string::npos) << d.log();
}

}  // namespace
}  // namespace basild::testing
