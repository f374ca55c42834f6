// basild behind apbasil_proxy as a Slurm 17.11 select/alps controller and
// its job steps use it (tests/support/slurm_requests.h): what a site would
// hit. Every call here goes through POST /v1/basil, the proxy's path.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/basild/control/test_server.h"
#include "tests/basild/daemon/daemon_support.h"
#include "tests/basild/daemon/state_files.h"
#include "tests/support/slurm_requests.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/unix_socket.h"

namespace basild::testing {
namespace {

namespace slurm = basil::testing::slurm;

// As slurmctld runs apbasil and apkill: stderr discarded.
const basil_test::SpawnOptions kQuiet{.err = basil_test::Redirect::null()};

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

namespace basild::testing {
namespace {

// The RESERVE Slurm forwards for a job, answered late by ALPS (after the
// reservation is made).
void slow_reserves(const Daemon& d, int latency_ms = 1500) {
  emulator_admin(d.emu(), "fault --method RESERVE --latency-ms " + std::to_string(latency_ms));
}

bool wait_alps_holds(const Daemon& d, std::size_t n) {
  return wait_until([&] { return d.alps_reservations().size() >= n; }, 10s);
}

// basild killed while ALPS is answering a forwarded RESERVE: the proxy told
// Slurm the call failed, so Slurm reserves again. The restarted basild does
// not adopt the first reservation for the job: it releases it as a stray.
// An INVENTORY taken while the RESERVE was in flight listed it already: that
// made it neither "made outside basild" nor the job's.
TEST(SlurmChainTest, AForwardedReserveWhoseAnswerWasLostToAKilledBasildIsReleasedAsAStray) {
  JobTable jobs("777\n");
  Daemon d("chain-lost", "tds-8", "", reconcile("1h") + jobs.source());
  // apbasil's time-out outlasts the slow RESERVE: basild is killed first.
  edit_conf(d, Daemon::apbasil_timeout_line(), "timeout = \"30s\"");
  d.start();
  // Long enough for the poll below, checked (`answered`) rather than assumed.
  slow_reserves(d, 12000);
  std::atomic<bool> answered{false};
  std::string answer;  // written before `answered`, read after it
  std::jthread caller([&] {
    control::Client c(d.socket());
    const auto r =
        c.request("POST", "/v1/basil?failures=basil", slurm::reserve("777", "alice", 32), "application/xml", 30s);
    answer = std::to_string(r.status) + " " + r.message + " " + r.body.substr(0, 600);
    answered = true;
  });
  ASSERT_TRUE(wait_alps_holds(d, 1));
  const auto lost = *d.alps_reservations().begin();
  d.wait_for_poll();  // an INVENTORY that lists it, its RESERVE unanswered
  const auto log = d.log();
  const auto records = d.get("/v1/reservations");
  ASSERT_FALSE(answered) << "the RESERVE was answered before the check: " << answer << "\n" << log;
  EXPECT_EQ(log.find("B0233"), std::string::npos) << log;
  EXPECT_TRUE(records.value("reservations", nlohmann::json::array()).empty()) << records.dump();
  d.stop(SIGKILL);
  caller.join();
  emulator_admin(d.emu(), "fault --clear");
  d.start();
  ASSERT_TRUE(wait_until([&] { return d.alps_reservations().count(lost) == 0; }, 15s)) << d.log();
  const auto ev = d.events_of("orphan", lost);
  ASSERT_EQ(ev.size(), 1u) << d.get("/v1/events").dump();
  EXPECT_EQ(ev[0]["detail"]["kind"], "stray");
  EXPECT_TRUE(d.events_of("adopt", lost).empty()) << "never the job's";
  // Slurm's second RESERVE for the job is its reservation and stays.
  const auto again = forward(d, slurm::reserve("777", "alice", 32));
  ASSERT_TRUE(again.ok());
  const auto kept = std::get<basil::Reserved>(again.body).reservation_id;
  d.wait_for_poll();
  EXPECT_EQ(d.alps_reservations(), std::set<std::uint64_t>{kept});
}

// The caller went away before its answer (Slurm's ApbasilTimeout killed the
// proxy): the granted reservation is released at once, as a stray.
TEST(SlurmChainTest, AForwardedReserveWhoseCallerLeftBeforeTheAnswerIsReleasedAsAStray) {
  JobTable jobs("778\n");
  Daemon d("chain-gone", "tds-8", "", reconcile("1h") + jobs.source());
  d.start();
  slow_reserves(d);
  const std::string body = slurm::reserve("778", "alice", 32);
  const int fd = basil_test::connect_unix(d.socket());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(control::testing::send_all(fd, "POST /v1/basil?failures=basil HTTP/1.1\r\nHost: x\r\nContent-Type: "
                                               "application/xml\r\nContent-Length: " +
                                                   std::to_string(body.size()) + "\r\n\r\n" + body));
  ASSERT_TRUE(wait_alps_holds(d, 1));
  const auto granted = *d.alps_reservations().begin();
  ::close(fd);  // gone before the answer
  ASSERT_TRUE(wait_until([&] { return d.alps_reservations().count(granted) == 0; }, 15s)) << d.log();
  const auto ev = d.events_of("orphan", granted);
  ASSERT_EQ(ev.size(), 1u) << d.get("/v1/events").dump();
  EXPECT_EQ(ev[0]["detail"]["kind"], "stray");
}

}  // namespace
}  // namespace basild::testing

namespace basild::testing {
namespace {

// Slurm on the external login node runs cray.conf's apkill to signal a
// job's applications on scancel: apkill_proxy asks basild, which signals
// them on the main system through the ssh gateway. Only aprun applications
// of batch reservations are signalled.
TEST(SlurmChainTest, ApkillOnTheExternalNodeSignalsTheJobsApplicationOnTheMainSystem) {
  basil_test::TestSshd sshd;
  ASSERT_TRUE(sshd.Start()) << sshd.error();
  Daemon d("chain-apkill");
  std::ofstream(d.dir() + "/basild.conf", std::ios::app)
      << basil_test::conduit_conf(sshd, "ssh-gateway", emulator_path(), d.emu(), BASIL_BINARY_DIR);
  d.start();
  const auto reserved = forward(d, slurm::reserve("901", "alice", 32));
  ASSERT_TRUE(reserved.ok());
  const auto res_id = std::get<basil::Reserved>(reserved.body).reservation_id;
  ASSERT_TRUE(forward(d, slurm::confirm(res_id, "901", 5000)).ok());
  const auto apid = std::stoull(emulator_admin(d.emu(), "app start --resid " + std::to_string(res_id)));
  const std::string apkill = std::string(BASIL_BINARY_DIR) + "/apbasil_proxy/apkill_proxy";
  // As slurmctld runs it: no option, basild's socket from the environment, stderr discarded.
  ::setenv("APBASIL_PROXY_SOCKET", d.socket().c_str(), 1);
  const auto r = basil_test::run({apkill, "-9", std::to_string(apid)}, "", kQuiet);
  ::unsetenv("APBASIL_PROXY_SOCKET");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(application_running(d.emu(), apid));
  const auto ev = d.events_of("apkill", res_id);
  ASSERT_EQ(ev.size(), 1u) << d.get("/v1/events").dump();
  EXPECT_EQ(ev[0]["detail"]["signal"], 9);

  // An interactive reservation's application, or one ALPS does not have:
  // refused (exit 1), nothing signalled.
  const auto interactive = emulator_admin(d.emu(), "reserve --user bob --width 1 --interactive --pagg 77");
  const auto other = std::stoull(emulator_admin(d.emu(), "app start --resid " + interactive));
  const std::string socket = d.socket();
  EXPECT_EQ(basil_test::run({apkill, "--socket", socket, "-9", std::to_string(other)}, "", kQuiet).exit_code, 1);
  EXPECT_TRUE(application_running(d.emu(), other));
  EXPECT_EQ(basil_test::run({apkill, "--socket", socket, "-9", "999999"}, "", kQuiet).exit_code, 1);
  EXPECT_EQ(basil_test::run({apkill, "--socket", socket, "-NOPE", "5"}, "", kQuiet).exit_code, 2);
}

}  // namespace
}  // namespace basild::testing

namespace basild::testing {
namespace {

// As Slurm runs cray.conf's apbasil: the proxy program, no argument,
// basild's socket in the environment, stderr discarded.
basil::Response proxy_call(const std::string& xml) {
  const auto r = basil_test::run({std::string(BASIL_BINARY_DIR) + "/apbasil_proxy/apbasil_proxy"}, xml, kQuiet);
  auto resp = basil::decode_response(r.out);
  EXPECT_TRUE(resp) << r.out;
  return resp ? *resp : basil::Response{};
}

// Jobs are running when the link to the main system goes and basild is
// restarted meanwhile. Their steps end: each ENGINE is answered with the
// last good answer (else slurmstepd dies and the job holds its nodes for
// ever), each RELEASE fails as transient and is repeated as Slurm does;
// once the link is back the RELEASEs go through and nothing is left.
TEST(SlurmChainTest, JobStepsEndingAfterABasildRestartDuringALinkOutageFinishTheirJobs) {
  basil_test::TestSshd sshd;
  ASSERT_TRUE(sshd.Start()) << sshd.error();
  Daemon d("chain-outage");
  std::ofstream(d.dir() + "/basild.conf", std::ios::app)
      << basil_test::conduit_conf(sshd, "ssh-gateway", emulator_path(), d.emu(), BASIL_BINARY_DIR)
      << "reconnect_min = \"200ms\"\n";  // each call waits for an attempt: keep them close
  d.start();
  ::setenv("APBASIL_PROXY_SOCKET", d.socket().c_str(), 1);
  const auto engine = proxy_call(slurm::engine());
  ASSERT_TRUE(engine.ok());
  std::vector<std::uint64_t> jobs;
  for (const std::string job : {"501", "502", "503"}) {
    const auto r = proxy_call(slurm::reserve(job, "alice", 32));
    ASSERT_TRUE(r.ok());
    jobs.push_back(std::get<basil::Reserved>(r.body).reservation_id);
    ASSERT_TRUE(proxy_call(slurm::engine()).ok());
    ASSERT_TRUE(proxy_call(slurm::confirm(jobs.back(), job, 6000 + jobs.back())).ok());
  }

  sshd.Kill();
  d.stop(SIGTERM);
  d.start(false);
  ASSERT_TRUE(wait_until([&] { return d.get("/v1/health").is_object(); }, 10s)) << d.log();
  for (const auto id : jobs) {
    const auto e = proxy_call(slurm::engine());
    EXPECT_TRUE(e.ok()) << "slurmstepd would die";
    EXPECT_EQ(std::get<basil::EngineInfo>(e.body).version, std::get<basil::EngineInfo>(engine.body).version);
    for (int attempt = 0; attempt < 2; ++attempt) {
      const auto r = proxy_call(slurm::release(id));
      EXPECT_FALSE(r.ok());
      EXPECT_EQ(r.protocol, "1.3");
      EXPECT_EQ(r.error_class, basil::ErrorClass::kTransient) << "Slurm repeats it";
    }
  }
  ASSERT_EQ(d.alps_reservations().size(), 3u);

  ASSERT_TRUE(sshd.Start()) << sshd.error();
  for (const auto id : jobs)
    EXPECT_TRUE(wait_until([&] { return proxy_call(slurm::release(id)).ok(); }, 10s)) << "RELEASE " << id;
  ::unsetenv("APBASIL_PROXY_SOCKET");
  EXPECT_TRUE(d.alps_reservations().empty());
  d.wait_for_poll();
  EXPECT_TRUE(d.basild_reservations().empty()) << d.get("/v1/reservations").dump();
  EXPECT_EQ(d.log().find("B0232"), std::string::npos) << d.log();
}

}  // namespace
}  // namespace basild::testing
