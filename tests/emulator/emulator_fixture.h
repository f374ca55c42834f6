// The real basil-emulator binary as a scheduler calls it: a state directory
// per test, commands run with input on stdin and stdout and stderr
// captured, answers decoded strictly.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <string>

#include "basil_proto/codec.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace emulator_testing {

inline const std::string kBinary = BASIL_BINARY_DIR "/emulator/basil-emulator";

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string out;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) out.append(buf, static_cast<std::size_t>(in.gcount()));
  return out;
}

inline void spit(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

struct Ran {
  int rc = -1;
  std::string out;
  std::string err;
};

class EmulatorTest : public ::testing::Test {
 protected:
  // A fresh directory (a test may TearDown() and SetUp() again).
  void SetUp() override {
    tmp_.emplace("basil-emu-test");
    ASSERT_FALSE(tmp_->path().empty());
    dir_ = tmp_->path();
    state_ = dir_ + "/state";
  }
  void TearDown() override { tmp_.reset(); }

  // Runs `program args` with `input` on stdin (shell words are the
  // caller's) and $BASIL_EMULATOR_STATE set, killed after `timeout_s`.
  Ran sh(const std::string& command, const std::string& input = "", int timeout_s = 60) {
    const auto r = basil_test::run_shell(command, input,
                                         {.err = basil_test::Redirect::pipe(), .env = {"BASIL_EMULATOR_STATE=" + state_}},
                                         std::chrono::seconds(timeout_s));
    return Ran{r.exit_code, r.out, r.err};
  }
  Ran emu(const std::string& args, const std::string& input = "") { return sh(kBinary + " " + args, input); }

  void init(const std::string& preset, const std::string& extra = "") {
    Ran r = emu("init --preset " + preset + " --state '" + state_ + "' " + extra);
    ASSERT_EQ(r.rc, 0) << r.err;
  }

  // Sends a request through apbasil mode and decodes the answer strictly.
  basil::Response ask(const basil::Request& req, bool strict = true) {
    auto xml = basil::encode_request(req);
    EXPECT_TRUE(xml.is_ok()) << xml.status().message();
    if (!xml) return {};
    Ran r = emu("", *xml);
    last_out_ = r.out;
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(r.err, "");
    basil::DecodeOptions opts;
    opts.strict = strict;
    auto resp = basil::decode_response(r.out, opts);
    EXPECT_TRUE(resp.is_ok()) << resp.status().to_string() << "\n" << r.out.substr(0, 2000);
    if (!resp) return {};
    return *resp;
  }
  basil::Response ask(basil::Dialect d, basil::RequestBody body) { return ask(basil::make_request(d, std::move(body))); }

  // The last answer validates against the dialect's RELAX NG schema (tests/schema).
  void expect_valid(basil::Dialect d) {
    const std::string schema = std::string(BASIL_SCHEMA_DIR) + "/response-" + std::string(basil::dialect_id(d)) + ".rng";
    if (::access(schema.c_str(), R_OK) != 0) return;  // schemas not there: decoding alone
    const std::string file = dir_ + "/validate.xml";
    spit(file, last_out_);
    Ran v = sh("xmllint --noout --relaxng '" + schema + "' '" + file + "'");
    EXPECT_EQ(v.rc, 0) << v.err << "\n" << last_out_.substr(0, 3000);
  }

  std::optional<basil_test::TempDir> tmp_;
  std::string dir_;
  std::string state_;
  std::string last_out_;
};

inline basil::ReserveRequest reserve(std::uint64_t width, std::optional<std::uint32_t> nppn = std::nullopt) {
  basil::ReserveRequest r;
  r.user_name = "alice";
  r.batch_id = "1234";
  basil::ReserveParam p;
  p.width = width;
  p.nppn = nppn;
  r.params.push_back(p);
  return r;
}

inline basil::Request inventory_form(basil::InventoryQuery::Form form, std::uint64_t cc) {
  return basil::make_request(basil::Dialect::k1_3, basil::InventoryQuery{form, cc});
}

inline std::string text(const basil::Response& r) { return r.messages.empty() ? "" : r.messages[0].text; }

}  // namespace emulator_testing
