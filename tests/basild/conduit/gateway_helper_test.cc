// The gateway helper as shipped: one C99 file built here with -std=c99 and
// nothing but the C library, then run on frames against the real emulator.
// (Talked to frame by frame, as the conduit does: gateway_helper_live_test.cc.)
#include "tests/basild/conduit/gateway_helper_fixture.h"

namespace basild {
namespace {

using namespace gateway_testing;

TEST_F(GatewayHelperTest, AnswersEveryRequestLikeTheEmulatorAndExitsOnEndOfInput) {
  const auto state = emulator_state("gwh");
  const std::string inv = request(basil::InventoryQuery{});
  const std::string sum = request(basil::SummaryQuery{});
  // The emulator at a fixed time: an INVENTORY's time stamp is in seconds,
  // and the calls may straddle a second (seen in a CI run).
  const std::string emulator = "/usr/bin/env BASIL_EMULATOR_TIME=1800000000 " + emulator_path() + " --state " + state;
  const auto direct_inv = run_command("printf '%s' '" + inv + "' | " + emulator).out;
  ASSERT_NE(direct_inv.find("timestamp=\"1800000000\""), std::string::npos) << direct_inv.substr(0, 200);
  auto frames = run(conduit::encode_request_frame(1, inv) + conduit::encode_request_frame(2, sum) +
                        conduit::encode_request_frame(3, inv),
                    "--max-running 2 " + emulator);
  EXPECT_EQ(exit_code_, 0);
  ASSERT_FALSE(frames.empty());
  EXPECT_TRUE(std::holds_alternative<conduit::GatewayHello>(frames[0]));
  auto by_id = whole_answers(frames);
  ASSERT_EQ(by_id.size(), 3u);
  EXPECT_EQ(by_id[1].how, conduit::ExitHow::kExited);
  EXPECT_EQ(by_id[1].value, 0u);
  EXPECT_EQ(by_id[1].out, direct_inv);
  EXPECT_EQ(by_id[3].out, direct_inv);
  EXPECT_NE(by_id[2].out.find("<Summary"), std::string::npos);
}

TEST_F(GatewayHelperTest, BuiltWithLz4ItCompressesTheAnswersOnceAskedAndEachComesOutAsTheEmulatorWroteIt) {
  const std::string lz4_helper = build_lz4();
  const auto state = init_emulator("gwz", "xc30-2256");
  states_.push_back(state);
  const std::string inv = request(basil::InventoryQuery{});
  const std::string emulator = "/usr/bin/env BASIL_EMULATOR_TIME=1800000000 " + emulator_path() + " --state " + state;
  const auto direct_inv = run_command("printf '%s' '" + inv + "' | " + emulator).out;
  ASSERT_GT(direct_inv.size(), 8'000'000u);
  auto frames = run(conduit::encode_lz4_frame() + conduit::encode_request_frame(1, inv) +
                        conduit::encode_request_frame(2, request(basil::SummaryQuery{})) +
                        conduit::encode_request_frame(3, inv),
                    "--max-running 2 " + emulator, lz4_helper, true);
  EXPECT_EQ(exit_code_, 0);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(std::get<conduit::GatewayHello>(frames[0]).version, conduit::kGatewayVersion);
  EXPECT_TRUE(std::get<conduit::GatewayHello>(frames[0]).lz4);
  std::map<std::uint64_t, std::string> out;
  std::size_t pieces = 0, answers = 0;
  for (const auto& f : frames) {
    if (const auto* d = std::get_if<conduit::GatewayData>(&f)) {
      out[d->id] += d->bytes;
      ++pieces;
    } else if (const auto* a = std::get_if<conduit::GatewayAnswer>(&f)) {
      EXPECT_EQ(a->how, conduit::ExitHow::kExited);
      out[a->id] += a->out;
      ++answers;
    }
  }
  EXPECT_EQ(answers, 3u);
  EXPECT_GT(pieces, 2u) << "a long answer still travels in pieces as apbasil writes it";
  EXPECT_EQ(out[1], direct_inv);
  EXPECT_EQ(out[3], direct_inv);
  EXPECT_NE(out[2].find("<Summary"), std::string::npos);
  // Two INVENTORYs of 8.9 MB travelled in a tenth of one.
  EXPECT_LT(wire_bytes_, direct_inv.size() / 10);

  // The limit counts what apbasil wrote: an oversized answer is reported, not sent.
  frames = run(conduit::encode_lz4_frame() + conduit::encode_request_frame(4, inv), "--max-output 100000 " + emulator,
               lz4_helper, true);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(std::get<conduit::GatewayAnswer>(frames.back()).how, conduit::ExitHow::kOverflow);
}

TEST_F(GatewayHelperTest, AskedToCompressWhatItCannotItStopsWithAnError) {
  const std::string lz4_helper = build_lz4();
  for (const auto& [helper, frame, why] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {helper_, conduit::encode_lz4_frame(), "compression not built in"},
           {lz4_helper, "Z zstd\n", "bad compression header"}}) {
    auto frames = run(frame + conduit::encode_request_frame(1, "<x/>"), "/bin/cat", helper);
    EXPECT_EQ(exit_code_, 1) << why;
    ASSERT_EQ(frames.size(), 2u) << why;
    EXPECT_EQ(std::get<conduit::GatewayError>(frames[1]).message, why);
  }
}

TEST_F(GatewayHelperTest, ReportsAnApbasilThatCannotRunAndAnOversizedAnswer) {
  const auto state = emulator_state("gwh2");
  auto frames = run(conduit::encode_request_frame(9, "<x/>"), "/nonexistent/apbasil");
  ASSERT_EQ(frames.size(), 2u);
  // glibc's posix_spawn reports the failed exec itself (a C library that
  // spawns with fork would give exit status 127 instead).
  const auto& a = std::get<conduit::GatewayAnswer>(frames[1]);
  EXPECT_EQ(a.id, 9u);
  EXPECT_EQ(a.how, conduit::ExitHow::kSpawnFailed);
  EXPECT_EQ(a.value, static_cast<std::uint64_t>(ENOENT));
  EXPECT_NE(a.err.find("No such file"), std::string::npos) << a.err;

  frames = run(conduit::encode_request_frame(4, request(basil::InventoryQuery{})),
               "--max-output 100 " + emulator_path() + " --state " + state);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(std::get<conduit::GatewayAnswer>(frames[1]).how, conduit::ExitHow::kOverflow);
  EXPECT_TRUE(std::get<conduit::GatewayAnswer>(frames[1]).out.empty());
}

TEST_F(GatewayHelperTest, NoDescriptorItsParentLeftOpenReachesApbasil) {
  // The shell that starts the helper leaves descriptors 7 and 300 open (not
  // close-on-exec); apbasil, a shell here, reports which of them it has.
  auto frames = run(conduit::encode_request_frame(1, "x"),
                    "/bin/sh -c 'for f in 7 300; do [ -e /proc/$$/fd/$f ] && echo leaked $f; done; echo checked' "
                    "7</dev/null 300</dev/null");
  EXPECT_EQ(exit_code_, 0);
  ASSERT_EQ(frames.size(), 2u);
  const auto& a = std::get<conduit::GatewayAnswer>(frames[1]);
  EXPECT_EQ(a.how, conduit::ExitHow::kExited);
  EXPECT_EQ(a.out, "checked\n");
}

TEST_F(GatewayHelperTest, RefusesAnOversizedRequestOrABadFrame) {
  auto frames = run("Q 1 5000\n" + std::string(5000, 'x'), "--max-request 1000 /bin/cat");
  EXPECT_EQ(exit_code_, 1);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_NE(std::get<conduit::GatewayError>(frames[1]).message.find("over the limit"), std::string::npos);
  frames = run("HELLO\n", "/bin/cat");
  EXPECT_EQ(exit_code_, 1);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<conduit::GatewayError>(frames[1]));
}

TEST_F(GatewayHelperTest, RunsApkillWithTheSignalAndApidOfTheFrame) {
  const auto state = emulator_state("gwh3");
  const auto apid = testing::start_application(state);
  ASSERT_TRUE(testing::application_running(state, apid));
  auto frames = run(conduit::encode_apkill_frame(6, 9, apid) + conduit::encode_apkill_frame(7, 9, apid + 1000),
                    "--apkill " + emulator_path() + " --apkill-arg --state --apkill-arg " + state +
                        " --apkill-arg apkill /bin/false");
  EXPECT_EQ(exit_code_, 0);
  ASSERT_EQ(frames.size(), 3u);
  std::map<std::uint64_t, conduit::GatewayAnswer> by_id;
  for (std::size_t i = 1; i < frames.size(); ++i) {
    auto& a = std::get<conduit::GatewayAnswer>(frames[i]);
    by_id[a.id] = a;
  }
  EXPECT_EQ(by_id[6].how, conduit::ExitHow::kExited);
  EXPECT_EQ(by_id[6].value, 0u) << by_id[6].err;
  EXPECT_FALSE(testing::application_running(state, apid));
  // An unknown apid: apkill's own failure, exit status and stderr.
  EXPECT_EQ(by_id[7].how, conduit::ExitHow::kExited);
  EXPECT_NE(by_id[7].value, 0u);
  EXPECT_NE(by_id[7].err.find("not found"), std::string::npos) << by_id[7].err;
}

TEST_F(GatewayHelperTest, ApkillWithoutTheOptionCannotStart) {
  auto frames = run(conduit::encode_apkill_frame(3, 9, 12) + conduit::encode_request_frame(4, ""), "/bin/true");
  EXPECT_EQ(exit_code_, 0);
  ASSERT_EQ(frames.size(), 3u);
  const auto& a = std::get<conduit::GatewayAnswer>(frames[1]);
  EXPECT_EQ(a.id, 3u);
  EXPECT_EQ(a.how, conduit::ExitHow::kSpawnFailed);
  EXPECT_EQ(a.value, static_cast<std::uint32_t>(ENOENT));
  EXPECT_NE(a.err.find("--apkill"), std::string::npos) << a.err;
  // The helper goes on serving.
  EXPECT_EQ(std::get<conduit::GatewayAnswer>(frames[2]).id, 4u);
}

TEST_F(GatewayHelperTest, RefusesAnApkillFrameWithABadSignalOrApid) {
  for (const std::string bad : {"A 1 0 5\n", "A 1 65 5\n", "A 1 9 -5\n", "A 1 9 5x\n", "A 1 9\n",
                                "A 1 9 5 6\n", "A 1 9 99999999999999999999999\n"}) {
    auto frames = run(bad, "--apkill /bin/true /bin/cat");
    EXPECT_EQ(exit_code_, 1) << bad;
    ASSERT_EQ(frames.size(), 2u) << bad;
    EXPECT_NE(std::get<conduit::GatewayError>(frames[1]).message.find("bad apkill header"), std::string::npos) << bad;
  }
}

TEST_F(GatewayHelperTest, ApkillPathMustBeAbsoluteAndArgsNeedIt) {
  auto r = run_command(helper_ + " --apkill apkill /bin/cat < /dev/null");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("usage: basil_gateway"), std::string::npos) << r.out;
  r = run_command(helper_ + " --apkill-arg x /bin/cat < /dev/null");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--apkill-arg ARG"), std::string::npos) << r.out;
}

TEST_F(GatewayHelperTest, CancelKillsARunningRequest) {
  // "sleep" reads no stdin and writes nothing: only the cancel ends it early.
  auto frames = run(conduit::encode_request_frame(5, "") + conduit::encode_cancel_frame(5), "/bin/sleep 30");
  ASSERT_EQ(frames.size(), 2u);
  const auto& a = std::get<conduit::GatewayAnswer>(frames[1]);
  EXPECT_EQ(a.how, conduit::ExitHow::kSignaled);
  EXPECT_EQ(a.value, 9u);
}

// A call cancelled while it waits for a place (--max-running) never runs:
// it is answered as killed at once, before the call that holds the place.
TEST_F(GatewayHelperTest, CancelOfAQueuedCallAnswersItKilledAndItNeverRuns) {
  auto frames = run(conduit::encode_request_frame(5, "") + conduit::encode_request_frame(6, "") +
                        conduit::encode_cancel_frame(6) + conduit::encode_cancel_frame(5),
                    "--max-running 1 /bin/sleep 30");
  ASSERT_EQ(frames.size(), 3u);
  const auto& queued = std::get<conduit::GatewayAnswer>(frames[1]);
  EXPECT_EQ(queued.id, 6u);
  EXPECT_EQ(queued.how, conduit::ExitHow::kSignaled);
  EXPECT_EQ(queued.value, 9u);
  EXPECT_EQ(queued.err, "killed before it started");
  const auto& running = std::get<conduit::GatewayAnswer>(frames[2]);
  EXPECT_EQ(running.id, 5u);
  EXPECT_EQ(running.how, conduit::ExitHow::kSignaled);
}

}  // namespace
}  // namespace basild
