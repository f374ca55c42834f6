// The gateway helper's tests share this: the helper built from its one C99
// file (as a site builds it), run on frames from a file or talked to frame
// by frame (LiveHelper), and the stand-in apbasils they run.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
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

namespace basild::gateway_testing {

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

  // Runs the helper (`helper`, default the plain one) on `input` and
  // parses its output, decompressing it when `lz4`. Its stdin stays open
  // until every call in `input` is answered (the helper kills what still
  // runs when its input ends), or it stopped with an error; then it is
  // closed and the exit status taken. `args` go through bash (redirections
  // of descriptors over 9 included).
  std::vector<conduit::GatewayFrame> run(const std::string& input, const std::string& args,
                                         const std::string& helper = "", bool lz4 = false) {
    basil_test::Subprocess p({"/bin/bash", "-c", "exec " + (helper.empty() ? helper_ : helper) + " " + args},
                             {.in = basil_test::Redirect::pipe(), .out = basil_test::Redirect::pipe()});
    EXPECT_TRUE(p.started()) << p.error();
    EXPECT_TRUE(p.write(input));
    conduit::GatewayReader reader(1 << 28);
    if (lz4) reader.expect_lz4();
    std::vector<conduit::GatewayFrame> frames;
    std::size_t answered = 0, wire = 0;
    const std::size_t calls = calls_in(input);
    bool ended = false;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    // No call in `input`: until the helper ends by itself (a bad frame).
    while ((answered < calls || calls == 0) && !ended && std::chrono::steady_clock::now() < until) {
      std::string got;
      ended = p.read_stdout(got, std::chrono::seconds(1)) == basil_test::Subprocess::Read::kEnd;
      wire += got.size();
      reader.feed(got);
      for (;;) {
        auto f = reader.next();
        EXPECT_TRUE(f) << f.status().message();
        if (!f || !*f) break;
        if (std::holds_alternative<conduit::GatewayAnswer>(**f)) ++answered;
        ended = ended || std::holds_alternative<conduit::GatewayError>(**f);
        frames.push_back(std::move(**f));
      }
    }
    p.close_stdin();
    std::string rest;
    while (p.read_stdout(rest, std::chrono::seconds(20)) != basil_test::Subprocess::Read::kEnd) {
    }
    const auto e = p.wait_for(std::chrono::seconds(20));
    exit_code_ = e ? e->code() : -1;
    wire_bytes_ = wire + rest.size();
    return frames;
  }

  // The Q and A frames (calls) in a stream of frames to the helper.
  static std::size_t calls_in(std::string_view in) {
    std::size_t calls = 0;
    while (!in.empty()) {
      const auto nl = in.find('\n');
      if (nl == std::string_view::npos) break;
      const std::string line(in.substr(0, nl));
      in.remove_prefix(nl + 1);
      unsigned long long id = 0, len = 0;
      if (std::sscanf(line.c_str(), "Q %llu %llu", &id, &len) == 2 ||
          std::sscanf(line.c_str(), "I %llu", &len) == 1) {
        in.remove_prefix(std::min<std::size_t>(len, in.size()));
        if (line[0] == 'Q') ++calls;
      } else if (line[0] == 'A') {
        ++calls;
      }
    }
    return calls;
  }

  std::string dir_, helper_;
  int exit_code_ = -1;
  std::size_t wire_bytes_ = 0;  // of the last run()'s output, as it travelled
};

// Each call's answer as the conduit puts it together: its D frames' bytes
// before the R frame's stdout. A call answered twice is a failure.
inline std::map<std::uint64_t, conduit::GatewayAnswer> whole_answers(const std::vector<conduit::GatewayFrame>& frames) {
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

inline std::string request(basil::RequestBody body) {
  return *basil::encode_request(basil::make_request(basil::Dialect::k1_3, std::move(body)));
}


// The helper on pipes, talked to frame by frame as the conduit does.
class LiveHelper {
 public:
  explicit LiveHelper(const std::vector<std::string>& argv)
      : helper_(argv, {.in = basil_test::Redirect::pipe(), .out = basil_test::Redirect::pipe()}) {
    EXPECT_TRUE(helper_.started()) << helper_.error();
  }
  void send(const std::string& bytes) { ASSERT_TRUE(helper_.write(bytes)); }
  // Its answers come compressed (after a Z frame).
  void expect_lz4() { reader_.expect_lz4(); }
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

// apbasil for the long-answer tests: 4 MiB of 'x' for a request that says BIG,
// "small" for any other.
inline constexpr const char* kSizedApbasil =
    "read -r line; case \"$line\" in *BIG*) head -c 4194304 /dev/zero | tr '\\0' x;; *) echo small;; esac";


inline std::string answer_of(const std::optional<conduit::GatewayFrame>& f) {
  if (!f || !std::holds_alternative<conduit::GatewayAnswer>(*f)) return "(no answer)";
  return std::get<conduit::GatewayAnswer>(*f).out;
}

}  // namespace basild::gateway_testing
