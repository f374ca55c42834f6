// How the emulator's apbasil mode writes its answer (emulator/answer.h),
// through a pipe as a client reads it.
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "basil_proto/codec.h"
#include "emulator/answer.h"
#include "tests/basil_proto/decoder_test_util.h"

namespace {

using basil::Code;

basil::Response inventory(std::size_t nodes) {
  auto r = basil::decode_response(basil::testing::make_inventory_1_3(nodes, nodes / 4));
  EXPECT_TRUE(r) << r.status().to_string();
  return r ? *r : basil::Response{};
}

struct Written {
  basil::Status status;
  std::string out;
};

// write_answer into a pipe while another thread reads it to its end.
Written through_pipe(const basil::Response& r) {
  int p[2];
  EXPECT_EQ(::pipe2(p, O_CLOEXEC), 0);
  Written w;
  std::thread reader([&] {
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(p[0], buf, sizeof buf);
      if (n <= 0) break;
      w.out.append(buf, static_cast<std::size_t>(n));
    }
  });
  w.status = emu::write_answer(p[1], r);
  ::close(p[1]);
  reader.join();
  ::close(p[0]);
  return w;
}

TEST(WriteAnswerTest, AnInventoryGoesOutAsTheWholeDocumentEncodeResponseGives) {
  const auto r = inventory(300);
  const auto whole = basil::encode_response(r);
  ASSERT_TRUE(whole);
  const auto w = through_pipe(r);
  ASSERT_TRUE(w.status) << w.status.to_string();
  EXPECT_TRUE(w.out == *whole) << w.out.size() << " bytes against " << whole->size();
}

TEST(WriteAnswerTest, AnInventoryThatCannotBeEncodedFromItsStartIsAnsweredWithAFailure) {
  auto r = inventory(50);
  std::get<basil::Inventory>(r.body).nodes.front().name = std::string("bad\x02name");
  const auto w = through_pipe(r);
  ASSERT_TRUE(w.status) << w.status.to_string();
  const auto back = basil::decode_response(w.out);
  ASSERT_TRUE(back) << w.out;
  EXPECT_FALSE(back->ok());
  EXPECT_NE(w.out.find("emulator could not encode its answer"), std::string::npos) << w.out;
}

TEST(WriteAnswerTest, AnInventoryCutAfterItsFirstPieceSaysWhyAndLeavesOnlyWhatWentOut) {
  auto r = inventory(300);
  std::get<basil::Inventory>(r.body).nodes.back().name = std::string("bad\x02name");
  const auto w = through_pipe(r);
  EXPECT_EQ(w.status.code(), Code::kInvalidText) << w.status.to_string();
  EXPECT_GT(w.out.size(), 64u * 1024u);
  EXPECT_FALSE(basil::decode_response(w.out)) << "a cut document never decodes";
  EXPECT_EQ(w.out.find("FAILURE"), std::string::npos) << "no answer is appended to a cut one";
}

TEST(WriteAnswerTest, AReaderThatIsGoneIsATransportError) {
  const auto old = std::signal(SIGPIPE, SIG_IGN);
  for (const auto& r : {inventory(50), [] {
                          basil::Response e;
                          e.dialect = basil::Dialect::k1_0;
                          e.protocol = "1.0";
                          e.method = basil::Method::kQuery;
                          e.body = basil::EngineInfo{};
                          return e;
                        }()}) {
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    ::close(p[0]);
    EXPECT_EQ(emu::write_answer(p[1], r).code(), Code::kTransport);
    ::close(p[1]);
  }
  std::signal(SIGPIPE, old);
}

}  // namespace
