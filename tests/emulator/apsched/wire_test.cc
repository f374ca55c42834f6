// The emulated apsched's local protocol (emulator/apsched/wire.h): every
// message survives a round trip; a line that is not one is an error.
#include <gtest/gtest.h>

#include "emulator/apsched/wire.h"

namespace emu::apsched {
namespace {

TEST(WireTest, RequestsRoundTrip) {
  RunRequest run;
  run.reservation_id = 7;
  run.shape = Shape{4, 2, 3, 1};
  run.argv = {"/bin/sh", "-c", "echo \"quoted\" \\ and\nnewline"};
  run.cwd = "/home/alice";
  run.env = {"PATH=/bin", "EMPTY="};
  for (const Request& r : {Request{run}, Request{KillRequest{100001, 9}}, Request{SyncRequest{}}}) {
    const std::string line = encode(r);
    ASSERT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line";
    auto back = decode_request(line);
    ASSERT_TRUE(back.is_ok()) << back.status().message();
    EXPECT_EQ(*back, r);
  }
}

TEST(WireTest, RepliesRoundTrip) {
  for (const Reply& r : {Reply{ReplyKind::kStarted, 100001, 0, ""},
                         Reply{ReplyKind::kDone, 0, 137, "Application 100001 exit signals: Killed\n"},
                         Reply{ReplyKind::kRefused, 0, 0, "apsched: no reservation for resId 9"},
                         Reply{ReplyKind::kOk, 0, 0, ""}, Reply{ReplyKind::kUnknown, 0, 0, ""}}) {
    auto back = decode_reply(encode(r));
    ASSERT_TRUE(back.is_ok()) << back.status().message();
    EXPECT_EQ(*back, r);
  }
}

TEST(WireTest, LinesThatAreNoMessageAreErrorsNamingWhatIsWrong) {
  EXPECT_FALSE(decode_request("not json").is_ok());
  EXPECT_FALSE(decode_request("[1,2]").is_ok());
  EXPECT_EQ(decode_request(R"({"op":"dance"})").status().message(), "unknown op \"dance\"");
  EXPECT_EQ(decode_request(R"({"op":"kill","apid":"x","signal":9})").status().message(),
            "\"apid\" has the wrong type");
  EXPECT_EQ(decode_request(R"({"op":"kill","signal":9})").status().message(), "no \"apid\"");
  EXPECT_EQ(decode_request(R"({"op":"run","resid":1,"n":1,"N":0,"d":1,"j":0,"argv":[],"cwd":"/","env":[]})")
                .status()
                .message(),
            "\"argv\" is empty");
  EXPECT_EQ(decode_reply(R"({"reply":"maybe"})").status().message(), "unknown reply \"maybe\"");
  EXPECT_FALSE(decode_reply(R"({"reply":"done"})").is_ok());
}

}  // namespace
}  // namespace emu::apsched
