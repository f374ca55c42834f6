// The gateway helper talked to frame by frame, as the conduit does: the flow
// window and credits, compressed long answers, early answers and the spare
// apbasil. The helper is built from its C99 file (gateway_helper_fixture.h).
#include "tests/basild/conduit/gateway_helper_fixture.h"

namespace basild {
namespace {

using namespace gateway_testing;

TEST_F(GatewayHelperTest, AWindowHoldsALongAnswerUntilCreditedWhileAShortOneStillPasses) {
  LiveHelper h({helper_, "/bin/sh", "-c", kSizedApbasil});
  auto hello = h.next();
  ASSERT_TRUE(hello);
  EXPECT_EQ(std::get<conduit::GatewayHello>(*hello).version, conduit::kGatewayVersion);
  EXPECT_FALSE(std::get<conduit::GatewayHello>(*hello).lz4) << "built without BASIL_GATEWAY_LZ4";
  const std::size_t window = 128 * 1024;
  h.send(conduit::encode_window_frame(window) + conduit::encode_request_frame(1, "BIG\n"));
  // Pieces of call 1 up to the window (and at most one read beyond it).
  std::size_t streamed = 0;
  while (streamed < window) {
    auto f = h.next();
    ASSERT_TRUE(f);
    streamed += std::get<conduit::GatewayData>(*f).bytes.size();
  }
  // A short call meanwhile is answered; by then the helper has gone round
  // its loop, and call 1 has sent nothing more without credit.
  h.send(conduit::encode_request_frame(2, "ENGINE\n"));
  for (;;) {
    auto f = h.next();
    ASSERT_TRUE(f);
    if (auto* d = std::get_if<conduit::GatewayData>(&*f)) {
      streamed += d->bytes.size();
      continue;
    }
    const auto& a = std::get<conduit::GatewayAnswer>(*f);
    EXPECT_EQ(a.id, 2u);
    EXPECT_EQ(a.out, "small\n");
    break;
  }
  EXPECT_LE(streamed, window + 65536);
  // Credits let the rest come; the whole answer arrives, in order.
  h.send(conduit::encode_credit_frame(1, streamed));
  std::size_t total = streamed;
  for (;;) {
    auto f = h.next();
    ASSERT_TRUE(f) << "stalled after " << total << " bytes";
    if (auto* d = std::get_if<conduit::GatewayData>(&*f)) {
      total += d->bytes.size();
      h.send(conduit::encode_credit_frame(1, d->bytes.size()));
      continue;
    }
    const auto& a = std::get<conduit::GatewayAnswer>(*f);
    EXPECT_EQ(a.id, 1u);
    EXPECT_EQ(a.how, conduit::ExitHow::kExited);
    total += a.out.size();
    break;
  }
  EXPECT_EQ(total, std::size_t{4} << 20);
}

TEST_F(GatewayHelperTest, WithoutAWindowALongAnswerStreamsWithoutCredits) {
  // A version 2 conduit sends no W frame and no credits.
  LiveHelper h({helper_, "/bin/sh", "-c", kSizedApbasil});
  ASSERT_TRUE(h.next());
  h.send(conduit::encode_request_frame(1, "BIG\n"));
  std::size_t total = 0, pieces = 0;
  for (;;) {
    auto f = h.next();
    ASSERT_TRUE(f) << "stalled after " << total << " bytes";
    if (auto* d = std::get_if<conduit::GatewayData>(&*f)) {
      total += d->bytes.size();
      ++pieces;
      continue;
    }
    total += std::get<conduit::GatewayAnswer>(*f).out.size();
    break;
  }
  EXPECT_EQ(total, std::size_t{4} << 20);
  EXPECT_GT(pieces, 1u);
}

// Compressed, a long answer travels in frames of up to a MiB of stdout, not
// one per 64-KiB read (an 8.9-MB INVENTORY made 137 frames through sshd and
// the conduit), and what its writer wrote before a pause still leaves: here
// apbasil writes 3 MiB and a little more, then waits on a FIFO that the test
// opens only once all of it is in.
TEST_F(GatewayHelperTest, CompressedALongAnswerTravelsInMebibyteFramesAndWhatPrecedesAPauseStillLeaves) {
  const std::string lz4_helper = build_lz4();
  const std::string hold = dir_ + "/hold";
  ASSERT_EQ(::mkfifo(hold.c_str(), 0600), 0);
  const std::size_t before_pause = (std::size_t{3} << 20) + 1000;
  const std::string apbasil = "read -r line; head -c " + std::to_string(before_pause) +
                              " /dev/zero | tr '\\0' x; read -r go < " + hold + "; printf END";
  LiveHelper h({lz4_helper, "/bin/sh", "-c", apbasil});
  auto hello = h.next();
  ASSERT_TRUE(hello);
  ASSERT_TRUE(std::get<conduit::GatewayHello>(*hello).lz4);
  h.expect_lz4();
  h.send(conduit::encode_lz4_frame() + conduit::encode_request_frame(1, "BIG\n"));
  std::size_t got = 0, largest = 0;
  while (got < before_pause) {
    auto f = h.next();
    ASSERT_TRUE(f) << "only " << got << " bytes arrived while apbasil paused";
    const auto* d = std::get_if<conduit::GatewayData>(&*f);
    ASSERT_NE(d, nullptr) << "the call ended while its apbasil waited";
    got += d->bytes.size();
    largest = std::max(largest, d->bytes.size());
  }
  EXPECT_EQ(got, before_pause);
  EXPECT_GT(largest, std::size_t{256} << 10) << "a frame per read";
  EXPECT_LE(largest, (std::size_t{1} << 20) + 65536) << "a frame holds a MiB of stdout and at most one read more";
  ASSERT_TRUE(let_go(hold));
  std::string tail;
  for (;;) {
    auto f = h.next();
    ASSERT_TRUE(f);
    if (const auto* d = std::get_if<conduit::GatewayData>(&*f)) {
      tail += d->bytes;
      continue;
    }
    const auto& r = std::get<conduit::GatewayAnswer>(*f);
    EXPECT_EQ(r.how, conduit::ExitHow::kExited);
    tail += r.out;
    break;
  }
  EXPECT_EQ(tail, "END");
  EXPECT_EQ(h.finish(), 0);
}

// A short answer that may be whole (it ends in '>') leaves in a D frame at
// once, while its apbasil still runs: here apbasil waits on a FIFO that the
// test opens only once that frame is in. The R frame with the exit status
// follows the exit. An answer that does not end in '>' waits for the exit.
TEST_F(GatewayHelperTest, AShortAnswerEndingInATagLeavesBeforeApbasilExitsAndItsExitStatusFollows) {
  const std::string hold = dir_ + "/hold";
  ASSERT_EQ(::mkfifo(hold.c_str(), 0600), 0);
  const std::string apbasil = "read -r line; case \"$line\" in *WHOLE*) printf '<Answer/>\\n';; *) printf 'cut <A';; esac;"
                              " read -r go < " + hold + "; exit 3";
  LiveHelper h({helper_, "/bin/sh", "-c", apbasil});
  ASSERT_TRUE(h.next());
  h.send(conduit::encode_request_frame(1, "WHOLE\n"));
  auto early = h.next();
  ASSERT_TRUE(early);
  const auto* d = std::get_if<conduit::GatewayData>(&*early);
  ASSERT_NE(d, nullptr) << "the whole answer waited for apbasil's exit";
  EXPECT_EQ(d->id, 1u);
  EXPECT_EQ(d->bytes, "<Answer/>\n");
  ASSERT_TRUE(let_go(hold));
  auto end = h.next();
  ASSERT_TRUE(end);
  const auto& r = std::get<conduit::GatewayAnswer>(*end);
  EXPECT_EQ(r.id, 1u);
  EXPECT_EQ(r.how, conduit::ExitHow::kExited);
  EXPECT_EQ(r.value, 3u);
  EXPECT_EQ(r.out, "");

  h.send(conduit::encode_request_frame(2, "CUT\n"));
  ASSERT_TRUE(let_go(hold));
  auto cut = h.next();
  ASSERT_TRUE(cut);
  const auto* r2 = std::get_if<conduit::GatewayAnswer>(&*cut);
  ASSERT_NE(r2, nullptr) << "an answer that does not end in '>' left before apbasil's exit";
  EXPECT_EQ(r2->id, 2u);
  EXPECT_EQ(r2->value, 3u);
  EXPECT_EQ(r2->out, "cut <A");
  EXPECT_EQ(h.finish(), 0);
}

TEST_F(GatewayHelperTest, ASpareApbasilStartedAheadTakesTheNextRequestAndIsKilledUnreadAtTheEnd) {
  LiveHelper h({helper_, "/bin/sh", "-c", logging_apbasil(dir_)});
  auto hello = h.next();
  ASSERT_TRUE(hello);
  ASSERT_EQ(std::get<conduit::GatewayHello>(*hello).version, conduit::kGatewayVersion);
  h.send(conduit::encode_spare_frame(1));
  // Started before any request exists.
  ASSERT_TRUE(basil_test::wait_until([&] { return logged(dir_, "start").size() == 1; }, 20s, 5ms));
  const std::string first = logged(dir_, "start")[0];
  h.send(conduit::encode_request_frame(1, "ONE"));
  EXPECT_EQ(answer_of(h.next()), "answer " + first + "\n");
  // The next spare started when the first was taken, and takes the next request.
  ASSERT_TRUE(basil_test::wait_until([&] { return logged(dir_, "start").size() == 2; }, 20s, 5ms));
  const std::string second = logged(dir_, "start")[1];
  EXPECT_NE(second, first);
  h.send(conduit::encode_request_frame(2, "TWO"));
  EXPECT_EQ(answer_of(h.next()), "answer " + second + "\n");
  ASSERT_TRUE(basil_test::wait_until([&] { return logged(dir_, "start").size() == 3; }, 20s, 5ms));
  // End of input: the third, unused, is killed before it reads an empty request.
  EXPECT_EQ(h.finish(), 0);
  EXPECT_EQ(logged(dir_, "read"), (std::vector<std::string>{first + " ONE", second + " TWO"}));
  EXPECT_EQ(logged(dir_, "start").size(), 3u);
}

// The next spare starts as soon as a call has taken the one before, while
// that call still runs (here its apbasil waits on a FIFO), so that a call
// close behind it finds a spare too.
TEST_F(GatewayHelperTest, ATakenSpareIsReplacedWhileItsCallRunsAndTheNextCallTakesTheNewOne) {
  const std::string hold = dir_ + "/hold";
  ASSERT_EQ(::mkfifo(hold.c_str(), 0600), 0);
  LiveHelper h({helper_, "/bin/sh", "-c",
                "echo \"start $$\" >> " + dir_ + "/LOG; req=$(cat); "
                "if [ \"$req\" = HOLD ]; then read -r go < " + hold + "; fi; echo \"answer $$\""});
  ASSERT_TRUE(h.next());
  h.send(conduit::encode_spare_frame(1));
  ASSERT_TRUE(basil_test::wait_until([&] { return logged(dir_, "start").size() == 1; }, 20s, 5ms));
  const std::string first = logged(dir_, "start")[0];
  h.send(conduit::encode_request_frame(1, "HOLD"));
  ASSERT_TRUE(basil_test::wait_until([&] { return logged(dir_, "start").size() == 2; }, 20s, 5ms))
      << "no spare started while the first call ran";
  const std::string second = logged(dir_, "start")[1];
  h.send(conduit::encode_request_frame(2, "TWO"));
  EXPECT_EQ(answer_of(h.next()), "answer " + second + "\n");
  ASSERT_TRUE(let_go(hold));
  EXPECT_EQ(answer_of(h.next()), "answer " + first + "\n");
  EXPECT_EQ(h.finish(), 0);
}

TEST_F(GatewayHelperTest, ASpareThatEndedBeforeItsRequestIsNotUsed) {
  LiveHelper h({helper_, "/bin/sh", "-c", logging_apbasil(dir_)});
  ASSERT_TRUE(h.next());
  basil_test::write_file(dir_ + "/DIE", "");
  h.send(conduit::encode_spare_frame(1));
  ASSERT_TRUE(basil_test::wait_until([&] { return logged(dir_, "died").size() == 1; }, 20s, 5ms));
  // It logs before it exits: the request is sent once it has exited (a
  // zombie, or reaped), or the helper would rightly hand it the request.
  const auto dead = static_cast<pid_t>(std::stoi(logged(dir_, "died")[0]));
  ASSERT_TRUE(basil_test::wait_until(
      [&] {
        const char state = basil_test::process_state(dead);
        return state == 0 || state == 'Z' || state == 'X';
      },
      20s, 5ms))
      << dead;
  ::unlink((dir_ + "/DIE").c_str());
  h.send(conduit::encode_request_frame(7, "SEVEN"));
  auto f = h.next();
  ASSERT_TRUE(f && std::holds_alternative<conduit::GatewayAnswer>(*f));
  const auto& a = std::get<conduit::GatewayAnswer>(*f);
  EXPECT_EQ(a.how, conduit::ExitHow::kExited);
  EXPECT_EQ(a.value, 0u);  // not the dead spare's 3
  // An apbasil started for the call read it (a new spare may have started
  // since the answer left: it reads nothing).
  ASSERT_EQ(a.out.rfind("answer ", 0), 0u) << a.out;
  const std::string pid = a.out.substr(7, a.out.size() - 8);
  EXPECT_EQ(h.finish(), 0);
  EXPECT_EQ(logged(dir_, "read"), std::vector<std::string>{pid + " SEVEN"});
  EXPECT_EQ(logged(dir_, "died").size(), 1u);
  EXPECT_NE(logged(dir_, "died")[0], pid);
}

TEST_F(GatewayHelperTest, WithoutASpareFrameEveryRequestStartsItsOwnApbasil) {
  LiveHelper h({helper_, "/bin/sh", "-c", logging_apbasil(dir_)});
  ASSERT_TRUE(h.next());
  h.send(conduit::encode_request_frame(1, "ONE"));
  EXPECT_NE(answer_of(h.next()), "(no answer)");
  h.send(conduit::encode_spare_frame(0) + conduit::encode_request_frame(2, "TWO"));
  EXPECT_NE(answer_of(h.next()), "(no answer)");
  // Its exit proves no spare can start any more: two starts, two requests.
  EXPECT_EQ(h.finish(), 0);
  EXPECT_EQ(logged(dir_, "start").size(), 2u);
  EXPECT_EQ(logged(dir_, "read").size(), 2u);
}

TEST_F(GatewayHelperTest, RefusesASpareCountOverOne) {
  auto frames = run("S 2\n", "/bin/cat");
  EXPECT_NE(exit_code_, 0);
  ASSERT_FALSE(frames.empty());
  EXPECT_TRUE(std::holds_alternative<conduit::GatewayError>(frames.back()));
}

TEST_F(GatewayHelperTest, RefusesAWindowTooSmallToStreamIn) {
  auto frames = run(conduit::encode_window_frame(1000), "/bin/cat");
  EXPECT_NE(exit_code_, 0);
  ASSERT_FALSE(frames.empty());
  EXPECT_TRUE(std::holds_alternative<conduit::GatewayError>(frames.back()));
}


}  // namespace
}  // namespace basild
