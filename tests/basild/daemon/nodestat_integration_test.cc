// basilctl nodestat against the real basild and the emulated XC30: the
// reservations basild made are lettered in the picture, the node counts are
// INVENTORY's, and the [metrics] listener's /nodestat.json names no user.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <regex>
#include <string>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/net.h"
#include "tests/support/text.h"

namespace basild {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::curl;
using testing::Daemon;
using testing::Got;
using testing::wait_until;

const std::string kBasilctl = std::string(BASIL_BINARY_DIR) + "/basild/basilctl";

std::uint64_t reserve(const Daemon& d, const std::string& batch, const std::string& user, int nodes) {
  unsigned status = 0;
  const json body = {{"batch_id", batch}, {"user", user}, {"job", {{"nodes", nodes}}}};
  const json made = d.call("POST", "/v1/reserve", body.dump(), &status);
  EXPECT_EQ(status, 200u) << made.dump();
  return made.value("reservation_id", std::uint64_t{0});
}

// How many of each mark the grid's rows ("c2n3  ...") draw.
std::map<char, std::uint64_t> drawn(const std::string& picture) {
  std::map<char, std::uint64_t> out;
  const std::regex row("^c[0-9]+n[0-9]+  (.*)$");
  std::smatch m;
  for (const auto& line : basil_test::lines_of(picture))
    if (std::regex_match(line, m, row))
      for (char c : m[1].str()) ++out[c];
  return out;
}

TEST(NodestatIntegrationTest, BasilctlLettersBasildsReservationsAndTheListenerNamesNoUser) {
  const int port = basil_test::free_tcp_port();
  Daemon d("nodestat", "xc30-2256", "", "[metrics]\nlisten = \"127.0.0.1:" + std::to_string(port) + "\"\n");
  d.start();
  const auto alice = reserve(d, "41", "alice", 4);
  const auto bob = reserve(d, "42", "bob", 8);
  ASSERT_LT(alice, bob);
  ASSERT_TRUE(wait_until([&] { return d.get("/v1/nodestat").value("reservations", json::array()).size() == 2; },
                         20s))
      << d.get("/v1/nodestat").dump();

  const auto ran = basil_test::run({kBasilctl, "--socket", d.socket(), "nodestat"});
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  const std::string& picture = ran.out;
  EXPECT_EQ(picture.rfind("Allocation status of xc30 at ", 0), 0u) << picture;
  EXPECT_TRUE(std::regex_search(picture, std::regex("\na +" + std::to_string(alice) + " +41 +alice +4 +reserved\n")))
      << picture;
  EXPECT_TRUE(std::regex_search(picture, std::regex("\nb +" + std::to_string(bob) + " +42 +bob +8 +reserved\n")))
      << picture;
  const auto marks = drawn(picture);
  EXPECT_EQ(marks.count('a') ? marks.at('a') : 0, 4u) << picture;
  EXPECT_EQ(marks.count('b') ? marks.at('b') : 0, 8u) << picture;

  // The counts are INVENTORY's: every node once, by its mark.
  const auto json_run = basil_test::run({kBasilctl, "--socket", d.socket(), "--json", "nodestat"});
  const json doc = json::parse(json_run.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << json_run.out;
  const json nodes = d.get("/v1/inventory").value("nodes", json::array());
  std::uint64_t counted = 0;
  for (const auto& [m, n] : doc["counts"].items()) {
    counted += n.get<std::uint64_t>();
    if (m.size() == 1 && m != "a" && m != "b") {
      EXPECT_EQ(marks.count(m[0]) ? marks.at(m[0]) : 0, n.get<std::uint64_t>()) << m;
    }
  }
  EXPECT_EQ(counted, nodes.size());
  EXPECT_EQ(doc["nodes_in_inventory"], nodes.size());
  EXPECT_EQ(doc["counts"]["-"], nodes.size() - 12);
  EXPECT_EQ(doc["available"]["batch"], nodes.size() - 12);

  // Over TCP: the same map, no user named.
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  const Got got = curl({base + "/nodestat.json"});
  ASSERT_EQ(got.status, 200) << got.body << d.log();
  EXPECT_EQ(got.body.find("alice"), std::string::npos) << got.body;
  EXPECT_EQ(got.body.find("bob"), std::string::npos) << got.body;
  const json published = json::parse(got.body, nullptr, false);
  ASSERT_TRUE(published.is_object()) << got.body;
  ASSERT_EQ(published["reservations"].size(), 2u);
  EXPECT_EQ(published["reservations"][0]["batch_id"], "41");
  EXPECT_EQ(published["reservations"][0]["reservation_id"], alice);
  EXPECT_FALSE(published["reservations"][0].contains("user"));
  EXPECT_EQ(published["counts"], doc["counts"]);
  EXPECT_EQ(curl({base + "/v1/nodestat"}).status, 404) << "the control route is not served there";
}

// ALPS's INVENTORY is fetched again when a node changes (its changecount
// leaves allocations out) or when it is old; the nodes of a reservation
// basild made carry it at once in GET /v1/inventory and basilctl
// inventory, as in basilctl reservations, and lose it with the release.
TEST(NodestatIntegrationTest, TheInventoryShowsAReservationBasildMadeOnItsNodesAtOnceAndNotAfterItsRelease) {
  Daemon d("inventory-held", "tds-8");
  d.start();
  ASSERT_TRUE(wait_until([&] { return d.get("/v1/inventory").contains("nodes"); }, 20s)) << d.log();
  const auto held_by = [&](std::uint64_t resid) {
    std::uint64_t n = 0;
    for (const auto& node : d.get("/v1/inventory").value("nodes", json::array()))
      if (node.value("reservation_id", json(nullptr)) == json(resid)) ++n;
    return n;
  };
  const auto resid = reserve(d, "51", "alice", 3);
  ASSERT_NE(resid, 0u);
  EXPECT_EQ(held_by(resid), 3u) << d.get("/v1/inventory").dump();
  const auto table = basil_test::run({kBasilctl, "--socket", d.socket(), "inventory"});
  ASSERT_EQ(table.exit_code, 0) << table.out;
  const auto lines = basil_test::lines_of(table.out);
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                          [&](const std::string& line) {
                            return std::regex_search(line, std::regex("^ *[0-9]+  c\\S+  UP .* " +
                                                                      std::to_string(resid) + "$"));
                          }),
            3)
      << table.out;

  unsigned status = 0;
  d.call("POST", "/v1/release", json{{"reservation_id", resid}}.dump(), &status);
  ASSERT_EQ(status, 200u);
  EXPECT_TRUE(wait_until([&] { return held_by(resid) == 0; }, 20s)) << d.get("/v1/inventory").dump();
}

}  // namespace
}  // namespace basild
