#include "basild/core/json_args.h"

#include <gtest/gtest.h>

namespace basild {
namespace {

using nlohmann::json;

constexpr std::string_view kParams[] = {"width", "depth", "nppn", "nppcu", "memory_mb", "nodes", "mode"};

TEST(JsonArgsTest, NearestKeyIsOneItBeginsOrWithinTwoEdits) {
  EXPECT_EQ(nearest_key("memory", kParams), "memory_mb");
  EXPECT_EQ(nearest_key("widht", kParams), "width");
  EXPECT_EQ(nearest_key("npcu", kParams), "nppcu");
  EXPECT_EQ(nearest_key("node", kParams), "nodes");
  EXPECT_FALSE(nearest_key("colour", kParams));
  EXPECT_FALSE(nearest_key("x", kParams));
}

TEST(JsonArgsTest, UnknownKeyIsNamedWithTheNearOneAndEveryKnownOne) {
  auto s = only_known_keys(json{{"width", 1}, {"memory", 100}}, "reserve: params[0]", kParams);
  EXPECT_EQ(s.code(), basil::Code::kInvalidValue);
  EXPECT_EQ(s.message(),
            "reserve: params[0]: unknown key \"memory\" (did you mean \"memory_mb\"? known: width, depth, nppn, "
            "nppcu, memory_mb, nodes, mode)");
  auto far = only_known_keys(json{{"colour", "red"}}, "confirm", {"reservation_id", "pagg_id"});
  EXPECT_EQ(far.message(), "confirm: unknown key \"colour\" (known: reservation_id, pagg_id)");
  EXPECT_TRUE(only_known_keys(json{{"width", 1}, {"mode", "SHARED"}}, "p", kParams));
}

TEST(JsonArgsTest, IntegerPastItsLimitIsRefusedNamingKeyAndLimitNotDropped) {
  const json j = {{"depth", 4294967296ULL}, {"nppn", 4294967295ULL}, {"neg", -1}, {"text", "2"}, {"frac", 1.5}};
  auto depth = uint_arg(j, "reserve: params[0]", "depth", kJsonU32Max);
  ASSERT_FALSE(depth);
  EXPECT_EQ(depth.status().message(),
            "reserve: params[0]: \"depth\" must be an integer from 0 to 4294967295, not 4294967296");
  auto nppn = uint_arg(j, "p", "nppn", kJsonU32Max);
  ASSERT_TRUE(nppn);
  EXPECT_EQ(**nppn, 4294967295u);
  for (const char* name : {"neg", "text", "frac"}) {
    auto v = uint_arg(j, "p", name, kJsonU64Max);
    ASSERT_FALSE(v) << name;
    EXPECT_NE(v.status().message().find(std::string("\"") + name + "\""), std::string::npos) << v.status().message();
  }
  auto absent = uint_arg(j, "p", "width", kJsonU64Max);
  ASSERT_TRUE(absent);
  EXPECT_FALSE(*absent);
  EXPECT_FALSE(uint_arg(json{{"width", 0}}, "p", "width", kJsonU64Max, 1));
}

TEST(JsonArgsTest, RequiredIntegerNamesTheKeyWhenMissing) {
  auto missing = required_uint_arg(json::object(), "release", "reservation_id", kJsonU64Max);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().message(),
            "release: \"reservation_id\" (an integer from 0 to 18446744073709551615) is required");
  auto huge = required_uint_arg(json::parse(R"({"reservation_id": 18446744073709551616})"), "release",
                                "reservation_id", kJsonU64Max);
  ASSERT_FALSE(huge) << "a number past 2^64-1 (parsed as a fraction) is refused, not rounded";
  EXPECT_NE(huge.status().message().find("\"reservation_id\""), std::string::npos);
}

}  // namespace
}  // namespace basild
