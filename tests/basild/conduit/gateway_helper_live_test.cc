// The gateway helper talked to frame by frame, as the conduit does: a long
// answer travels in pieces, and nothing it started outlives its hold on
// basild: its input ending, its output hung up, a signal, or a new helper
// of the same conduit identity end it and every call's process group.
#include <signal.h>

#include "tests/basild/conduit/gateway_helper_fixture.h"

namespace basild {
namespace {

using namespace gateway_testing;

// apbasil that forks a child and hangs, as a wedged apbasil may: both
// write their pids to PIDS, then wait for ever.
std::string hanging_apbasil(const std::string& dir) {
  return "sleep 300 & echo $! >> " + dir + "/PIDS; echo $$ >> " + dir + "/PIDS; wait";
}

// The pids the hanging apbasil wrote, once both are there.
std::vector<pid_t> hanging_pids(const std::string& dir) {
  std::vector<pid_t> pids;
  EXPECT_TRUE(basil_test::wait_until([&] {
    pids.clear();
    std::istringstream in(basil_test::read_file(dir + "/PIDS"));
    for (long p; in >> p;) pids.push_back(static_cast<pid_t>(p));
    return pids.size() >= 2;
  }));
  return pids;
}

bool gone(pid_t pid) {
  for (const auto& p : basil_test::processes())
    if (p.pid == pid) return p.state == 'Z';
  return true;
}

// Every one of `pids` gone within 5 s.
void expect_gone_within_5s(const std::vector<pid_t>& pids, const std::string& what) {
  for (pid_t p : pids) EXPECT_TRUE(basil_test::wait_until([&] { return gone(p); }, 5s)) << what << ": pid " << p;
}

TEST_F(GatewayHelperTest, ALongAnswerTravelsInPiecesAsApbasilWritesIt) {
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

TEST_F(GatewayHelperTest, CompressedALongAnswerTravelsInAFewFramesAsApbasilWroteIt) {
  const std::string lz4_helper = build_lz4();
  LiveHelper h({lz4_helper, "/bin/sh", "-c", kSizedApbasil});
  auto hello = h.next();
  ASSERT_TRUE(hello);
  ASSERT_TRUE(std::get<conduit::GatewayHello>(*hello).lz4);
  h.expect_lz4();
  h.send(conduit::encode_lz4_frame() + conduit::encode_request_frame(1, "BIG\n") +
         conduit::encode_request_frame(2, "small\n"));
  std::map<std::uint64_t, std::string> out;
  std::size_t pieces = 0;
  for (int answers = 0; answers < 2;) {
    auto f = h.next();
    ASSERT_TRUE(f);
    if (const auto* d = std::get_if<conduit::GatewayData>(&*f)) {
      out[d->id] += d->bytes;
      ++pieces;
      continue;
    }
    const auto& r = std::get<conduit::GatewayAnswer>(*f);
    EXPECT_EQ(r.how, conduit::ExitHow::kExited);
    out[r.id] += r.out;
    ++answers;
  }
  EXPECT_EQ(out[1], std::string(std::size_t{4} << 20, 'x'));
  EXPECT_EQ(out[2], "small\n");
  EXPECT_GE(pieces, 3u) << "a piece per MiB of stdout";
  EXPECT_LE(pieces, 5u) << "not a piece per read";
  EXPECT_EQ(h.finish(), 0);
}

// basild stopped, killed, or its ssh session gone: the helper's input ends.
// A hung apbasil and the child it forked go with it at once; the helper
// does not wait for them.
TEST_F(GatewayHelperTest, EndOfInputKillsEveryCallsProcessGroupWithin5s) {
  LiveHelper h({helper_, "/bin/sh", "-c", hanging_apbasil(dir_)});
  ASSERT_TRUE(h.next());
  h.send(conduit::encode_request_frame(1, "<x/>"));
  const auto pids = hanging_pids(dir_);
  ASSERT_EQ(pids.size(), 2u);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(h.finish(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  expect_gone_within_5s(pids, "after the end of input");
}

// The session's end is seen on the output too: sshd gone closes the pipe
// the helper writes into (here the test's end of a FIFO), though its input
// may stay open.
TEST_F(GatewayHelperTest, OutputHungUpKillsEveryCallsProcessGroupWithin5s) {
  const std::string out = dir_ + "/out.fifo";
  ASSERT_EQ(::mkfifo(out.c_str(), 0600), 0);
  const int reader = ::open(out.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  basil_test::Subprocess helper({helper_, "/bin/sh", "-c", hanging_apbasil(dir_)},
                                {.in = basil_test::Redirect::pipe(), .out = basil_test::Redirect::file(out)});
  ASSERT_TRUE(helper.write(conduit::encode_request_frame(1, "<x/>")));
  const auto pids = hanging_pids(dir_);
  ASSERT_EQ(pids.size(), 2u);
  ::close(reader);  // input still open
  EXPECT_TRUE(helper.wait_for(5s)) << "the helper outlived its output";
  expect_gone_within_5s(pids, "after the output hung up");
}

TEST_F(GatewayHelperTest, SigtermKillsEveryCallsProcessGroupAndEndsTheHelper) {
  basil_test::Subprocess helper({helper_, "/bin/sh", "-c", hanging_apbasil(dir_)},
                                {.in = basil_test::Redirect::pipe(), .out = basil_test::Redirect::null()});
  ASSERT_TRUE(helper.write(conduit::encode_request_frame(1, "<x/>")));
  const auto pids = hanging_pids(dir_);
  ASSERT_EQ(pids.size(), 2u);
  helper.signal(SIGTERM);
  const auto e = helper.wait_for(5s);
  ASSERT_TRUE(e) << "the helper outlived SIGTERM";
  EXPECT_EQ(e->code(), 0);
  expect_gone_within_5s(pids, "after SIGTERM");
}

// A basild that lost its session without the login node noticing (its host
// died) starts a new helper with the same identity: the old one, still
// holding a hung call, is ended with it. A helper of another identity
// (another basild's) is left alone.
TEST_F(GatewayHelperTest, ANewHelperOfTheSameIdentityEndsItsPredecessorAndNoOtherHelper) {
  const std::string locks = dir_ + "/locks";
  const auto argv = [&](const std::string& tag) {
    return std::vector<std::string>{helper_, "--lock-dir", locks, "/bin/sh", "-c", hanging_apbasil(dir_ + "/" + tag)};
  };
  ASSERT_EQ(::mkdir((dir_ + "/old").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((dir_ + "/other").c_str(), 0700), 0);
  basil_test::Subprocess old_helper(argv("old"), {.in = basil_test::Redirect::pipe(), .out = basil_test::Redirect::null()});
  basil_test::Subprocess other(argv("other"), {.in = basil_test::Redirect::pipe(), .out = basil_test::Redirect::null()});
  ASSERT_TRUE(old_helper.write(conduit::encode_identity_frame("login1:/var/lib/basild/state.db") +
                               conduit::encode_request_frame(1, "<x/>")));
  ASSERT_TRUE(other.write(conduit::encode_identity_frame("login2:/var/lib/basild/state.db") +
                          conduit::encode_request_frame(1, "<x/>")));
  const auto old_pids = hanging_pids(dir_ + "/old");
  const auto other_pids = hanging_pids(dir_ + "/other");
  ASSERT_EQ(old_pids.size(), 2u);
  ASSERT_EQ(other_pids.size(), 2u);

  LiveHelper successor({helper_, "--lock-dir", locks, "/bin/cat"});
  ASSERT_TRUE(successor.next());
  successor.send(conduit::encode_identity_frame("login1:/var/lib/basild/state.db") +
                 conduit::encode_request_frame(7, "still serves"));
  EXPECT_EQ(answer_of(successor.next()), "still serves");
  EXPECT_TRUE(old_helper.wait_for(5s)) << "the predecessor outlived its successor's start";
  expect_gone_within_5s(old_pids, "the predecessor's call");
  EXPECT_FALSE(other.try_wait()) << "another identity's helper was ended";
  for (pid_t p : other_pids) EXPECT_FALSE(gone(p)) << "another identity's call was killed";
  EXPECT_EQ(successor.finish(), 0);
}

}  // namespace
}  // namespace basild
