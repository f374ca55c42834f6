// The real basil-slurm as Slurm runs it, against a real basild and the
// emulator: Slurm's environment set as slurmctld and slurmstepd set it,
// and a stand-in scontrol that prints a line Slurm 22.05 printed
// (tests/data/slurm) and records what `scontrol update` was asked.
#include <gtest/gtest.h>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/files.h"

namespace basild::testing {
namespace {

const std::string kProgram = std::string(BASIL_BINARY_DIR) + "/slurm/basil-slurm";

// combo_tpn4_c2_tpc1: job 45 on nid[00008-00009], --ntasks-per-node=4 -c 2
// --ntasks-per-core=1: nppcu 1, 16 processors per node visible.
class SlurmSide {
 public:
  // `confirm`: basil-slurm.conf's [basild] confirm (the prolog confirms
  // every job with its job id, unless "node").
  // `more_basild`: more of its [basild] section.
  explicit SlurmSide(const std::string& socket, const std::string& fixture = "combo_tpn4_c2_tpc1",
                     const std::string& confirm = "controller", const std::string& more_basild = "")
      : dir_(make_temp_dir("slurm-side")) {
    basil_test::write_file(dir_ + "/show.txt",
                           basil_test::read_file(std::string(BASIL_TEST_DATA) + "/slurm/" + fixture + ".txt"));
    // show: the captured record, then the AdminComment an update set;
    // update: its arguments, one a line.
    scontrol_ = write_script("scontrol",
                             "d='" + dir_ + "'\n"
                             "if [ \"$2\" = show ]; then cat \"$d/show.txt\"; "
                             "[ -f \"$d/comment\" ] && printf ' AdminComment=%s \\n' \"$(cat \"$d/comment\")\"; exit 0; fi\n"
                             "if [ \"$1\" = update ]; then printf '%s\\n' \"$@\" >> \"$d/updates\"; "
                             "for a in \"$@\"; do case \"$a\" in AdminComment=*) printf '%s' \"${a#AdminComment=}\" > "
                             "\"$d/comment\";; esac; done; exit 0; fi\n"
                             "exit 1");
    basil_test::write_file(dir_ + "/basil-slurm.conf", "[basild]\nsocket = \"" + socket + "\"\ntimeout = \"20s\"\n" +
                                                           "confirm = \"" + confirm + "\"\n" + more_basild +
                                                           "[slurm]\nscontrol = \"" + scontrol_ + "\"\n" +
                                                           "[log]\nfile = \"" + dir_ + "/hooks.log\"\nsyslog = false\n");
  }

  // basil-slurm as Slurm starts the hook of `context` for job 45.
  basil_test::Ran run(const std::string& context, const std::string& job_id = "45") const {
    return basil_test::run({kProgram, "--config", dir_ + "/basil-slurm.conf"}, {},
                           {.err = basil_test::Redirect::pipe(), .env = env(context, job_id)}, 60s);
  }
  // The same, started and left running.
  basil_test::Subprocess start(const std::string& context, const std::string& job_id = "45") const {
    return basil_test::Subprocess({kProgram, "--config", dir_ + "/basil-slurm.conf"},
                                  {.err = basil_test::Redirect::null(), .env = env(context, job_id)});
  }

  // basil-slurm node-confirm, as the basil_reservation plugin runs it.
  basil_test::Ran node_confirm(const std::string& job_id, std::uint64_t reservation, std::uint64_t pagg,
                               const std::string& apbasil = "") const {
    std::vector<std::string> argv = {kProgram, "--config", dir_ + "/basil-slurm.conf", "node-confirm", "--job", job_id,
                                     "--reservation", std::to_string(reservation), "--pagg-id", std::to_string(pagg)};
    if (!apbasil.empty()) argv.insert(argv.end(), {"--apbasil", apbasil});
    return basil_test::run(argv, {}, {.err = basil_test::Redirect::pipe()}, 60s);
  }

  // The hook's environment as Slurm gives it.
  static std::vector<std::string> env(const std::string& context, const std::string& job_id) {
    std::vector<std::string> env = {"SLURM_SCRIPT_CONTEXT=" + context, "SLURM_JOB_ID=" + job_id};
    if (context != "prolog_task")
      env.insert(env.end(), {"SLURM_JOB_USER=alice", "SLURM_JOB_ACCOUNT=(null)",
                             "SLURM_JOB_NODELIST=nid[00008-00009]", "SLURM_JOB_NUM_NODES=2"});
    return env;
  }

  // The record `scontrol show job` prints (before any AdminComment).
  std::string record() const { return basil_test::read_file(dir_ + "/show.txt"); }
  void set_record(const std::string& text) const { basil_test::write_file(dir_ + "/show.txt", text); }
  std::string updates() const { return basil_test::read_file(dir_ + "/updates"); }
  std::string log() const { return basil_test::read_file(dir_ + "/hooks.log"); }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::string scontrol_;
};

json job_reservation(const Daemon& d, const std::string& batch_id) {
  for (const auto& r : d.get("/v1/reservations").value("reservations", json::array()))
    if (r.value("batch_id", "") == batch_id) return r;
  return nullptr;
}

// --check-config as the hooks' users: root passes against a running basild;
// nobody, who can neither reach basild's socket nor write the log file,
// fails on both with the user named.
TEST(SlurmHooksTest, CheckConfigChecksTheLogAndBasildAsTheUserAHookRunsAs) {
  if (::geteuid() != 0) GTEST_SKIP() << "--as needs root";
  Daemon d("slurm-hooks-check");
  d.start();
  SlurmSide side(d.socket());
  const std::string conf = side.dir() + "/basil-slurm.conf";
  auto ok = basil_test::run({kProgram, "--config", conf, "--check-config"}, {}, {.err = basil_test::Redirect::pipe()});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("ok    basild: " + d.socket() + " answers"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("ok    log: " + side.dir() + "/hooks.log"), std::string::npos) << ok.out;
  auto nobody = basil_test::run({kProgram, "--config", conf, "--check-config", "--as", "nobody"}, {},
                                {.err = basil_test::Redirect::pipe()});
  EXPECT_EQ(nobody.exit_code, 1) << nobody.out << nobody.err;
  EXPECT_NE(nobody.out.find("FAIL  log: " + side.dir() + "/hooks.log: nobody (uid 65534) cannot append"),
            std::string::npos)
      << nobody.out;
  // The test's folders keep nobody from the socket itself (basild's own
  // refusal, 403, is SetupCheckTest's).
  EXPECT_NE(nobody.out.find("FAIL  basild: " + d.socket() + ": permission denied"), std::string::npos) << nobody.out;
}

TEST(SlurmHooksTest, AJobsLifeReservesWithItsShapeConfirmsExportsAndReleases) {
  Daemon d("slurm-hooks-life");
  d.start(true, /*xml_log=*/true);
  SlurmSide slurm(d.socket());

  const auto prolog = slurm.run("prolog_slurmctld");
  ASSERT_EQ(prolog.exit_code, 0) << prolog.err << slurm.log();
  const json r = job_reservation(d, "45");
  ASSERT_TRUE(r.is_object()) << d.get("/v1/reservations").dump();
  EXPECT_EQ(r["nodes"], "8-9");
  EXPECT_EQ(r["user"], "alice");
  EXPECT_EQ(r["width"], 32);  // 2 nodes x 16 cores, one thread each
  EXPECT_EQ(r["nppn"], 16);
  EXPECT_EQ(r["nppcu"], 1);
  EXPECT_EQ(r["state"], "confirmed");
  EXPECT_EQ(r["pagg_id"], 45);
  const auto id = r["reservation_id"].get<std::uint64_t>();
  EXPECT_EQ(d.alps_reservations(), std::set<std::uint64_t>{id});
  // What went to ALPS, as the XML log has it.
  const std::string xml = basil_test::read_file(d.dir() + "/basil_xml.log");
  EXPECT_NE(xml.find("width=\"32\" depth=\"1\" nppn=\"16\" nppcu=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<NodeParam>8-9</NodeParam>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("pagg_id=\"45\""), std::string::npos) << xml;
  EXPECT_EQ(slurm.updates(), "update\nJobId=45\nAdminComment=basil: reservation " + std::to_string(id) + "\n");

  const auto task = slurm.run("prolog_task");
  EXPECT_EQ(task.exit_code, 0) << task.err;
  EXPECT_EQ(task.out, "export BASIL_RESERVATION_ID=" + std::to_string(id) + "\nexport BASIL_RESERVATION_JOB=45\n");

  const auto epilog = slurm.run("epilog_slurmctld");
  EXPECT_EQ(epilog.exit_code, 0) << epilog.err;
  // Handed to basild's RELEASE loop: released a moment after the epilog.
  EXPECT_TRUE(testing::wait_until([&] { return !job_reservation(d, "45").is_object(); }, 10s))
      << d.get("/v1/reservations").dump();
  EXPECT_TRUE(d.alps_reservations().empty());
  EXPECT_EQ(d.events_of("release", id).size(), 1u) << d.get("/v1/events").dump();
}

// The record with its JobName `bytes` long.
std::string with_long_name(const std::string& record, std::size_t bytes) {
  const std::string name = "JobName=combo ";
  const auto at = record.find(name);
  EXPECT_NE(at, std::string::npos) << record;
  return record.substr(0, at) + "JobName=" + std::string(bytes, 'n') + " " + record.substr(at + name.size());
}

// A record past 64 KiB (a long job name, before the fields the prolog
// reads): scontrol's output is kept as far as libslurm's, 16 MiB.
TEST(SlurmHooksTest, AJobRecordOver64KiBFromScontrolIsReadWhole) {
  Daemon d("slurm-hooks-long");
  d.start();
  SlurmSide slurm(d.socket());
  slurm.set_record(with_long_name(slurm.record(), 200 * 1024));
  const auto prolog = slurm.run("prolog_slurmctld");
  ASSERT_EQ(prolog.exit_code, 0) << prolog.err << slurm.log();
  const json r = job_reservation(d, "45");
  ASSERT_TRUE(r.is_object()) << d.get("/v1/reservations").dump();
  EXPECT_EQ(r["nodes"], "8-9");
  EXPECT_EQ(r["width"], 32);
  EXPECT_EQ(r["state"], "confirmed");
}

// Past 16 MiB the record is cut: the job fails for good with a sentence
// that says so, not with a field the cut took away.
TEST(SlurmHooksTest, AJobRecordPastTheLimitFromScontrolFailsPermanentlySayingTruncated) {
  Daemon d("slurm-hooks-cut");
  d.start();
  SlurmSide slurm(d.socket());
  slurm.set_record(with_long_name(slurm.record(), std::size_t{17} << 20));
  const auto prolog = slurm.run("prolog_slurmctld");
  EXPECT_EQ(prolog.exit_code, 2) << prolog.err;
  EXPECT_EQ(slurm.updates(),
            "update\nJobId=45\nRequeue=0\nAdminComment=basil: refused: show job 45 failed: the job's record was "
            "truncated: Slurm's answer passed basil-slurm's limit of 16 MiB\n");
  EXPECT_TRUE(d.alps_reservations().empty());
}

TEST(SlurmHooksTest, ARepeatedPrologKeepsTheReservationItHolds) {
  Daemon d("slurm-hooks-again");
  d.start();
  SlurmSide slurm(d.socket());
  ASSERT_EQ(slurm.run("prolog_slurmctld").exit_code, 0) << slurm.log();
  const auto first = job_reservation(d, "45")["reservation_id"];
  ASSERT_EQ(slurm.run("prolog_slurmctld").exit_code, 0) << slurm.log();
  EXPECT_EQ(job_reservation(d, "45")["reservation_id"], first);
  EXPECT_EQ(d.alps_reservations().size(), 1u);
  EXPECT_NE(slurm.log().find("is confirmed already"), std::string::npos) << slurm.log();
}

// confirm = "node": the prolog only reserves a batch job's reservation;
// the node CONFIRMs it with its container through basild, which refuses
// another job's, or through the node's own apbasil, which basild never
// hears of.
TEST(SlurmHooksTest, TheNodeConfirmsABatchJobsReservationThroughBasildOrItsOwnApbasil) {
  Daemon d("slurm-hooks-node");
  d.start();
  SlurmSide slurm(d.socket(), "combo_tpn4_c2_tpc1", "node");
  const auto prolog = slurm.run("prolog_slurmctld");
  ASSERT_EQ(prolog.exit_code, 0) << prolog.err << slurm.log();
  json r = job_reservation(d, "45");
  ASSERT_TRUE(r.is_object()) << d.get("/v1/reservations").dump();
  EXPECT_EQ(r["state"], "reserved");
  const auto id = r["reservation_id"].get<std::uint64_t>();

  const auto other = slurm.node_confirm("46", id, 777);
  EXPECT_EQ(other.exit_code, 2) << other.err;
  EXPECT_NE(other.err.find("is job 45's, not job 46's"), std::string::npos) << other.err;
  const auto own = slurm.node_confirm("45", id, 777);
  EXPECT_EQ(own.exit_code, 0) << own.err;
  r = job_reservation(d, "45");
  EXPECT_EQ(r["state"], "confirmed");
  EXPECT_EQ(r["pagg_id"], 777);

  const std::string apbasil = write_script("apbasil", "exec " + emulator_path() + " --state " + d.emu());
  const auto again = slurm.node_confirm("45", id, 778, apbasil);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(slurm.log().find("job 45 node-confirm: reservation " + std::to_string(id) +
                             " confirmed with pagg_id 778 through " + apbasil),
            std::string::npos)
      << slurm.log();
  EXPECT_NE(emulator_admin(d.emu(), "show").find("pagg 778"), std::string::npos) << emulator_admin(d.emu(), "show");
  const auto unknown = slurm.node_confirm("45", 999, 778, apbasil);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;  // after the retries, about 4 s
}

TEST(SlurmHooksTest, AJobBasildRefusesFailsNonRequeueableWithBasildsSentence) {
  Daemon d("slurm-hooks-refused");
  emulator_admin(d.emu(), "node --nids 9 --role INTERACTIVE");
  d.start();
  SlurmSide slurm(d.socket());
  const auto prolog = slurm.run("prolog_slurmctld");
  EXPECT_EQ(prolog.exit_code, 2) << prolog.err;
  EXPECT_EQ(slurm.updates(),
            "update\nJobId=45\nRequeue=0\nAdminComment=basil: refused: job refused before ALPS: node 9 of the job's "
            "node list is not a batch compute node in the inventory; list only batch compute nodes\n");
  EXPECT_TRUE(d.alps_reservations().empty());
  // No slurmctld here: libslurm's fatal() ends the child that makes the
  // completion call, not the prolog, and its reason reaches the log.
  EXPECT_NE(slurm.log().find("could not end the job FAILED (Slurm cancels it instead): "), std::string::npos)
      << slurm.log();
  // The epilog still runs (slurmctld runs it after a failed prolog) and finds nothing.
  EXPECT_EQ(slurm.run("epilog_slurmctld").exit_code, 0);
  EXPECT_NE(slurm.log().find("job 45 epilog: the job holds no reservation"), std::string::npos) << slurm.log();
}

TEST(SlurmHooksTest, ANodeDownInAlpsIsTransientAndLeavesTheJobRequeueable) {
  Daemon d("slurm-hooks-down");
  emulator_admin(d.emu(), "node --nids 8 --set-state DOWN");
  d.start();
  SlurmSide slurm(d.socket());
  const auto prolog = slurm.run("prolog_slurmctld");
  EXPECT_EQ(prolog.exit_code, 1) << prolog.err;
  EXPECT_EQ(slurm.updates(),
            "update\nJobId=45\nAdminComment=basil: could not start (transient): job refused before ALPS: node 8 of the "
            "job's node list is not UP now; wait or choose other nodes\n");
  EXPECT_TRUE(d.alps_reservations().empty());
}

TEST(SlurmHooksTest, BasildNotRunningIsWaitedForThenTransientAndTheEpilogSaysSo) {
  const auto dir = make_temp_dir("slurm-hooks-nobasild");
  SlurmSide slurm(dir + "/control.sock", "combo_tpn4_c2_tpc1", "controller", "outage_wait = \"2s\"\n");
  const auto prolog = slurm.run("prolog_slurmctld");
  EXPECT_EQ(prolog.exit_code, 1) << prolog.err;
  EXPECT_NE(slurm.updates().find("AdminComment=basil: waiting for basild, which did not answer: control socket "),
            std::string::npos)
      << slurm.updates();
  EXPECT_NE(slurm.updates().find("AdminComment=basil: could not start (transient): basild did not answer: "),
            std::string::npos)
      << slurm.updates();
  EXPECT_EQ(slurm.run("epilog_slurmctld").exit_code, 1);
  EXPECT_NE(slurm.log().find("job 45 epilog: cannot hand the job's release to basild"), std::string::npos) << slurm.log();
  // The task prolog prints nothing, and lets the task run.
  const auto task = slurm.run("prolog_task");
  EXPECT_EQ(task.exit_code, 0);
  EXPECT_EQ(task.out, "");
}

// basild starts while the prolog waits for it: the job is reserved and
// confirmed at once, its AdminComment names the reservation.
TEST(SlurmHooksTest, ABasildThatStartsWhileThePrologWaitsReservesTheJob) {
  Daemon d("slurm-hooks-late");
  SlurmSide slurm(d.socket());
  auto prolog = slurm.start("prolog_slurmctld");
  ASSERT_TRUE(prolog.started()) << prolog.error();
  ASSERT_TRUE(basild::testing::wait_until(
      [&] { return slurm.updates().find("waiting for basild") != std::string::npos; }, 30s))
      << slurm.log();
  d.start();
  const auto ended = prolog.wait_for(30s);
  ASSERT_TRUE(ended) << slurm.log();
  EXPECT_EQ(ended->code(), 0) << slurm.log();
  EXPECT_NE(slurm.log().find("the wait ended after "), std::string::npos) << slurm.log();
  const auto held = d.alps_reservations();
  ASSERT_EQ(held.size(), 1u);
  EXPECT_NE(slurm.updates().find("AdminComment=basil: reservation " + std::to_string(*held.begin())), std::string::npos)
      << slurm.updates();
}

// Without [slurm] scontrol the job's record comes from libslurm, in a
// child process per call: a configuration libslurm cannot parse ends that
// child (libslurm's fatal()), not the hook. The start is then a transient
// failure naming libslurm's reason, and nothing is reserved. (A missing
// slurm.conf libslurm waits for, up to a minute: [slurm] timeout bounds it.)
TEST(SlurmHooksTest, LibslurmThatCannotParseItsConfigurationFailsTheStartTransientlyWithItsReason) {
  Daemon d("slurm-hooks-libslurm");
  d.start();
  const auto dir = make_temp_dir("slurm-hooks-libslurm");
  basil_test::write_file(dir + "/slurm.conf", "ClusterName=x\nThisIsNoSlurmKey=1\n");
  basil_test::write_file(dir + "/basil-slurm.conf", "[basild]\nsocket = \"" + d.socket() + "\"\n[slurm]\nslurm_conf = \"" +
                                                        dir + "/slurm.conf\"\ntimeout = \"20s\"\n[log]\nfile = \"" +
                                                        dir + "/hooks.log\"\nsyslog = false\n");
  auto run = [&](const std::string& context) {
    return basil_test::run({kProgram, "--config", dir + "/basil-slurm.conf"}, {},
                           {.err = basil_test::Redirect::pipe(),
                            .env = {"SLURM_SCRIPT_CONTEXT=" + context, "SLURM_JOB_ID=45", "SLURM_JOB_USER=alice",
                                    "SLURM_JOB_ACCOUNT=(null)", "SLURM_JOB_NODELIST=nid[00008-00009]",
                                    "SLURM_JOB_NUM_NODES=2"}},
                           60s);
  };
  const auto prolog = run("prolog_slurmctld");
  const std::string log = basil_test::read_file(dir + "/hooks.log");
  EXPECT_EQ(prolog.exit_code, 1) << prolog.err;
  EXPECT_NE(log.find("job 45 prolog: transient failure: show job 45 failed: exited 1: "), std::string::npos) << log;
  EXPECT_NE(log.find("Unable to process configuration file"), std::string::npos) << log;  // libslurm's own words
  EXPECT_NE(log.find("job 45 prolog: update JobId=45 failed: exited 1: "), std::string::npos) << log;
  EXPECT_TRUE(d.alps_reservations().empty());
  EXPECT_TRUE(d.get("/v1/reservations").value("reservations", json::array()).empty());
  const auto task = run("prolog_task");
  EXPECT_EQ(task.exit_code, 0);
  EXPECT_EQ(task.out, "");
}

TEST(SlurmHooksTest, AnEpilogReleasesAReservationWhoseApplicationStillRuns) {
  Daemon d("slurm-hooks-claims");
  d.start();
  SlurmSide slurm(d.socket());
  ASSERT_EQ(slurm.run("prolog_slurmctld").exit_code, 0) << slurm.log();
  const auto id = job_reservation(d, "45")["reservation_id"].get<std::uint64_t>();
  const auto apid = emulator_admin(d.emu(), "app start --resid " + std::to_string(id));
  // basild answers "releasing" and goes on until the claims are gone.
  EXPECT_EQ(slurm.run("epilog_slurmctld").exit_code, 0) << slurm.log();
  EXPECT_NE(slurm.log().find("reservation " + std::to_string(id) + " releasing"), std::string::npos) << slurm.log();
  emulator_admin(d.emu(), "app end --apid " + apid);
  EXPECT_TRUE(wait_until([&] { return d.alps_reservations().empty(); }, 20s)) << d.get("/v1/reservations").dump();
}

}  // namespace
}  // namespace basild::testing
