// The gateway helper as shipped: one C99 file built here with -std=c99 and
// nothing but the C library, then run on frames against the real emulator.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "basil_proto/codec.h"
#include "tests/basild/io/emulator_support.h"
#include "basild/conduit/frames.h"
#include "tests/support/files.h"
#include "tests/support/proc.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait.h"

namespace basild {
namespace {

using namespace std::chrono_literals;

using testing::emulator_path;
using testing::init_emulator;
using testing::make_temp_dir;
using testing::run_command;

class GatewayHelperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("gwhelper");
    helper_ = dir_ + "/basil_gateway";
    auto r = run_command("cc -std=c99 -pedantic -Wall -Wextra -Werror -O2 -o " + helper_ + " " + BASIL_GATEWAY_SOURCE);
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  void TearDown() override {
    run_command("rm -rf " + dir_);
    for (const auto& d : states_) run_command("rm -rf " + d);
  }
  std::string emulator_state(const std::string& tag) {
    states_.push_back(init_emulator(tag));
    return states_.back();
  }
  std::vector<std::string> states_;

  // The helper built as a site with liblz4 builds it (its top comment).
  std::string build_lz4() {
    const std::string path = dir_ + "/basil_gateway_lz4";
    auto r = run_command("cc -std=c99 -pedantic -Wall -Wextra -Werror -O2 -DBASIL_GATEWAY_LZ4 -o " + path + " " +
                         BASIL_GATEWAY_SOURCE + " -llz4");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return path;
  }

  // Runs the helper (`helper`, default the plain one) on `input` (stdin
  // closed after it) and parses its output, decompressing it when `lz4`.
  std::vector<conduit::GatewayFrame> run(const std::string& input, const std::string& args,
                                         const std::string& helper = "", bool lz4 = false) {
    std::ofstream(dir_ + "/in", std::ios::binary) << input;
    auto r = run_command((helper.empty() ? helper_ : helper) + " " + args + " < " + dir_ + "/in > " + dir_ + "/out");
    exit_code_ = r.exit_code;
    conduit::GatewayReader reader(1 << 28);
    if (lz4) reader.expect_lz4();
    reader.feed(basil_test::read_file(dir_ + "/out"));
    std::vector<conduit::GatewayFrame> frames;
    for (;;) {
      auto f = reader.next();
      EXPECT_TRUE(f) << f.status().message();
      if (!f || !*f) break;
      frames.push_back(std::move(**f));
    }
    return frames;
  }

  std::string dir_, helper_;
  int exit_code_ = -1;
};

// Each call's answer as the conduit puts it together: its D frames' bytes
// before the R frame's stdout. A call answered twice is a failure.
std::map<std::uint64_t, conduit::GatewayAnswer> whole_answers(const std::vector<conduit::GatewayFrame>& frames) {
  std::map<std::uint64_t, std::string> pieces;
  std::map<std::uint64_t, conduit::GatewayAnswer> answers;
  for (const auto& f : frames) {
    if (const auto* d = std::get_if<conduit::GatewayData>(&f)) pieces[d->id] += d->bytes;
    if (const auto* r = std::get_if<conduit::GatewayAnswer>(&f)) {
      auto a = *r;
      a.out = pieces[a.id] + a.out;
      EXPECT_TRUE(answers.emplace(a.id, std::move(a)).second) << "call " << r->id << " answered twice";
    }
  }
  return answers;
}

std::string request(basil::RequestBody body) {
  return *basil::encode_request(basil::make_request(basil::Dialect::k1_3, std::move(body)));
}

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
  EXPECT_LT(std::filesystem::file_size(dir_ + "/out"), direct_inv.size() / 10);

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

// The helper on pipes, talked to frame by frame as the conduit does.
class LiveHelper {
 public:
  explicit LiveHelper(const std::vector<std::string>& argv)
      : helper_(argv, {.in = basil_test::Redirect::pipe(), .out = basil_test::Redirect::pipe()}) {
    EXPECT_TRUE(helper_.started()) << helper_.error();
  }
  void send(const std::string& bytes) { ASSERT_TRUE(helper_.write(bytes)); }
  // End of input; the helper's exit status within 20 s (nullopt: it did not end).
  std::optional<int> finish() {
    helper_.close_stdin();
    std::string rest;
    while (helper_.read_stdout(rest, std::chrono::seconds(20)) != basil_test::Subprocess::Read::kEnd) {
    }
    auto e = helper_.wait_for(std::chrono::seconds(20));
    if (!e) return std::nullopt;
    return e->code();
  }
  // The next frame, or nothing when none came within 20 s.
  std::optional<conduit::GatewayFrame> next() {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      auto f = reader_.next();
      EXPECT_TRUE(f) << f.status().message();
      if (!f) return std::nullopt;
      if (*f) return std::move(**f);
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      std::string got;
      if (helper_.read_stdout(got, left) == basil_test::Subprocess::Read::kEnd) return std::nullopt;
      reader_.feed(got);
    }
  }

 private:
  basil_test::Subprocess helper_;  // killed (its group) and reaped with the object
  conduit::GatewayReader reader_{1 << 28};
};

// apbasil for the flow tests: 4 MiB of 'x' for a request that says BIG,
// "small" for any other.
const char* const kSizedApbasil =
    "read -r line; case \"$line\" in *BIG*) head -c 4194304 /dev/zero | tr '\\0' x;; *) echo small;; esac";

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

// apbasil for the spare tests: logs its start and the request it read into
// LOG, answers with its pid; exits 3 at once while the file DIE exists.
std::string logging_apbasil(const std::string& dir) {
  return "if [ -e " + dir + "/DIE ]; then echo \"died $$\" >> " + dir + "/LOG; exit 3; fi; echo \"start $$\" >> " +
         dir + "/LOG; req=$(cat); echo \"read $$ $req\" >> " + dir + "/LOG; echo \"answer $$\"";
}

// The lines of LOG that begin with `word`, the word taken off.
std::vector<std::string> logged(const std::string& dir, const std::string& word) {
  std::vector<std::string> out;
  std::istringstream in(basil_test::read_file(dir + "/LOG"));
  for (std::string line; std::getline(in, line);)
    if (line.rfind(word + " ", 0) == 0) out.push_back(line.substr(word.size() + 1));
  return out;
}

// Lets an apbasil that waits on the FIFO `fifo` go: opens it once the
// apbasil has it open for reading (until then ENXIO) and writes a line.
bool let_go(const std::string& fifo) {
  int fd = -1;
  if (!basil_test::wait_until([&] { return (fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) >= 0; }))
    return false;
  const bool wrote = ::write(fd, "go\n", 3) == 3;
  ::close(fd);
  return wrote;
}

std::string answer_of(const std::optional<conduit::GatewayFrame>& f) {
  if (!f || !std::holds_alternative<conduit::GatewayAnswer>(*f)) return "(no answer)";
  return std::get<conduit::GatewayAnswer>(*f).out;
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
