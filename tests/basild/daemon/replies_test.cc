// The typed calls' JSON bodies: every key read or refused by name.
#include "basild/daemon/replies.h"

#include <gtest/gtest.h>

namespace basild {
namespace {

using nlohmann::json;

json reserve_body(json param) {
  return {{"batch_id", "42"}, {"user", "alice"}, {"params", json::array({std::move(param)})}};
}

std::string refusal(const json& body) {
  auto r = reserve_from_json(body);
  EXPECT_FALSE(r) << body.dump();
  if (r) return "";
  EXPECT_EQ(r.status().code(), basil::Code::kInvalidValue);
  return r.status().message();
}

TEST(ReserveFromJsonTest, IntegerPastWhatTheModelCarriesIsRefusedNamingKeyAndLimit) {
  for (const char* key : {"depth", "nppn", "nppcu"}) {
    EXPECT_EQ(refusal(reserve_body({{"width", 32}, {key, 4294967296ULL}})),
              std::string("reserve: params[0]: \"") + key + "\" must be an integer from 0 to 4294967295, not 4294967296");
  }
  EXPECT_EQ(refusal(reserve_body({{"width", 9223372036854775808ULL}})),
            "reserve: params[0]: \"width\" must be an integer from 1 to 9223372036854775807, not 9223372036854775808");
  json two = reserve_body({{"width", 9223372036854775807ULL}});
  two["params"].push_back({{"width", 1}});
  EXPECT_EQ(refusal(two), "reserve: the params' widths add up to more than 9223372036854775807");
  auto at_limit = reserve_from_json(reserve_body({{"width", 1}, {"depth", 4294967295ULL}, {"nppcu", 0}}));
  ASSERT_TRUE(at_limit) << at_limit.status().message();
  EXPECT_EQ(at_limit->params[0].depth, 4294967295u);
  EXPECT_EQ(at_limit->params[0].nppcu, 0u);
}

TEST(ReserveFromJsonTest, UnknownKeyIsRefusedNamingItAndTheNearOne) {
  EXPECT_EQ(refusal(reserve_body({{"width", 32}, {"memory", 1000}})),
            "reserve: params[0]: unknown key \"memory\" (did you mean \"memory_mb\"? known: width, depth, nppn, nppcu, "
            "memory_mb, nodes, mode)");
  json top = reserve_body({{"width", 32}});
  top["acount"] = "proj";
  EXPECT_EQ(refusal(top),
            "reserve: unknown key \"acount\" (did you mean \"account\"? known: batch_id, user, account, params); or the "
            "job form: \"job\" and \"policy\" instead of \"params\"");
}

TEST(ReserveFromJsonTest, WrongTypesAreRefusedNamingTheKey) {
  const std::pair<json, const char*> cases[] = {
      {{{"width", "32"}}, "\"width\""},        {{{"width", 32.5}}, "\"width\""},
      {{{"width", -1}}, "\"width\""},          {{{"width", 0}}, "\"width\""},
      {{{"width", 1}, {"nppn", true}}, "\"nppn\""}, {{{"width", 1}, {"nodes", 24}}, "\"nodes\""},
      {{{"width", 1}, {"nodes", ""}}, "\"nodes\""}, {{{"width", 1}, {"nodes", "5-3"}}, "\"nodes\""},
      {{{"width", 1}, {"mode", "shared!"}}, "\"mode\""}, {{{"depth", 1}}, "\"width\""},
  };
  for (const auto& [param, key] : cases) {
    const std::string m = refusal(reserve_body(param));
    EXPECT_NE(m.find(key), std::string::npos) << param.dump() << ": " << m;
  }
  EXPECT_NE(refusal({{"batch_id", "1"}, {"user", "a"}, {"params", json::array({7})}}).find("params[0]"),
            std::string::npos);
  EXPECT_NE(refusal({{"batch_id", "1"}, {"user", "a"}}).find("\"params\""), std::string::npos);
}

TEST(ReserveFromJsonTest, WhatWasUnderstoodIsWrittenBackAndReadTheSame) {
  const json body = {{"batch_id", "42"},
                     {"user", "alice"},
                     {"account", "proj"},
                     {"params", {{{"width", 64}, {"depth", 2}, {"nppn", 16}, {"nppcu", 1}, {"memory_mb", 1000},
                                  {"nodes", "24-27"}, {"mode", "SHARED"}},
                                 {{"width", 1}}}}};
  auto q = reserve_from_json(body);
  ASSERT_TRUE(q) << q.status().message();
  EXPECT_EQ(reserve_to_json(*q), body);
  auto again = reserve_from_json(reserve_to_json(*q));
  ASSERT_TRUE(again);
  EXPECT_EQ(reserve_to_json(*again), body);
}

TEST(ConfirmReleaseFromJsonTest, TakeOnlyTheirKeysAsIntegers) {
  auto c = confirm_from_json({{"reservation_id", 7}, {"pagg_id", 18446744073709551615ULL}});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->pagg_id, 18446744073709551615ULL);
  EXPECT_EQ(confirm_from_json({{"reservation_id", 7}, {"pagg_id", 1}, {"pagg", 2}}).status().message(),
            "confirm: unknown key \"pagg\" (did you mean \"pagg_id\"? known: reservation_id, pagg_id, batch_id)");
  EXPECT_NE(confirm_from_json({{"reservation_id", 7}}).status().message().find("\"pagg_id\""), std::string::npos);
  EXPECT_NE(confirm_from_json({{"reservation_id", "7"}, {"pagg_id", 1}}).status().message().find("\"reservation_id\""),
            std::string::npos);
  auto r = release_from_json({{"reservation_id", 9}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->reservation_id, 9u);
  EXPECT_EQ(release_from_json({{"reservation_id", 9}, {"force", true}}).status().message(),
            "release: unknown key \"force\" (known: reservation_id)");
  EXPECT_NE(release_from_json(json::object()).status().message().find("\"reservation_id\""), std::string::npos);
}

}  // namespace
}  // namespace basild
