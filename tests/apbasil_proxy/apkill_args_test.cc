// apkill's command line as a scheduler writes it, for apkill_proxy.
#include "apbasil_proxy/apkill_args.h"

#include <gtest/gtest.h>

namespace apbasil_proxy {
namespace {

TEST(ApkillArgsTest, ReadsTheSignalAndTheApplicationsAsSlurmWritesThem) {
  auto o = parse_apkill_args({"-9", "230893"});
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_EQ(o->signal, 9);
  EXPECT_EQ(o->apids, std::vector<std::uint64_t>{230893});
  for (const auto& [arg, sig] : std::vector<std::pair<std::string, int>>{
           {"-KILL", 9}, {"-SIGKILL", 9}, {"-TERM", 15}, {"-USR1", 10}, {"-CONT", 18}, {"-64", 64}}) {
    auto p = parse_apkill_args({arg, "7", "8"});
    ASSERT_TRUE(p) << arg << ": " << p.status().message();
    EXPECT_EQ(p->signal, sig) << arg;
    EXPECT_EQ(p->apids.size(), 2u);
  }
  auto plain = parse_apkill_args({"12"});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->signal, 15) << "TERM unless told, as kill";
  auto conf = parse_apkill_args({"--socket", "/run/x.sock", "-2", "5"});
  ASSERT_TRUE(conf);
  EXPECT_EQ(conf->socket, "/run/x.sock");
}

TEST(ApkillArgsTest, RefusesWhatItCannotCarryOutExactlyNamingIt) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {}, {"-9"}, {"-0", "5"}, {"-65", "5"}, {"-NOPE", "5"}, {"abc"}, {"-9", "5x"}, {"5", "-9"},
           {"--socket"}, {"-9", "-15", "5"}, {"18446744073709551616"}}) {
    auto o = parse_apkill_args(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_FALSE(o) << joined;
  }
  EXPECT_NE(parse_apkill_args({"-NOPE", "5"}).status().message().find("-NOPE"), std::string::npos);
}

}  // namespace
}  // namespace apbasil_proxy
