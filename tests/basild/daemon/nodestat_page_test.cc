// The machine map's web page on the [metrics] listener, in a real headless
// Chromium against a real basild on the emulated xc30-2256 with jobs
// running: the page's DOM has INVENTORY's nodes, each with its state and
// reservation. A screenshot goes to the test's output for people; the DOM is
// the assertion.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/net.h"

namespace basild {
namespace {

using namespace std::chrono_literals;
using testing::Daemon;
using nlohmann::json;

void page_test_node(const Daemon& d, const std::string& args) {
  auto r = testing::run_command(testing::emulator_path() + " node " + args + " --state " + d.emu());
  ASSERT_EQ(r.exit_code, 0) << r.out;
}

struct DomNode {
  std::string state;
  std::string res;
};

// Each drawn node cell's data attributes by NID, as Chromium's DOM has them.
std::map<std::uint32_t, DomNode> dom_nodes(const std::string& dom) {
  std::map<std::uint32_t, DomNode> out;
  const std::regex cell(R"(<td class="node"([^>]*)>)");
  const std::regex attr(R"re(data-([a-z]+)="([^"]*)")re");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), cell); it != std::sregex_iterator(); ++it) {
    const std::string attrs = (*it)[1];
    std::map<std::string, std::string> a;
    for (auto at = std::sregex_iterator(attrs.begin(), attrs.end(), attr); at != std::sregex_iterator(); ++at)
      a[(*at)[1]] = (*at)[2];
    if (!a.count("nid")) continue;  // a position ALPS does not list
    out[static_cast<std::uint32_t>(std::stoul(a["nid"]))] = {a["state"], a["res"]};
  }
  return out;
}

TEST(NodestatPageTest, InHeadlessChromiumEveryInventoryNodeIsDrawnWithItsStateAndReservation) {
  const auto chromium = basil_test::run({"/bin/sh", "-c", "command -v chromium"});
  ASSERT_EQ(chromium.exit_code, 0) << "chromium is missing (scripts/test installs it for this test)";
  const int port = basil_test::free_tcp_port();
  Daemon d("nodestat-page", "xc30-2256", "", "[metrics]\nlisten = \"127.0.0.1:" + std::to_string(port) + "\"\n");
  d.start();
  // Jobs running, one node down.
  for (const char* job : {"41", "42", "43"}) {
    unsigned status = 0;
    const json made = d.call("POST", "/v1/reserve",
                             json{{"batch_id", job}, {"user", "alice"}, {"job", {{"nodes", 40}}}}.dump(), &status);
    ASSERT_EQ(status, 200u) << made.dump();
  }
  page_test_node(d, "--nids 2000 --set-state DOWN");
  ASSERT_TRUE(testing::wait_until(
      [&] {
        const json inv = d.get("/v1/inventory");
        bool down = false;
        for (const auto& n : inv.value("nodes", json::array()))
          down = down || (n.value("nid", 0) == 2000 && n.value("state", "") == "DOWN");
        return down && inv.value("reservations", json::array()).size() == 3;
      },
      30s));
  const json inventory = d.get("/v1/inventory");

  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
  const std::vector<std::string> browser = {"chromium", "--headless", "--no-sandbox", "--disable-gpu",
                                            "--user-data-dir=" + d.dir() + "/chromium",
                                            "--virtual-time-budget=15000"};
  auto dump_argv = browser;
  dump_argv.insert(dump_argv.end(), {"--dump-dom", url});
  const auto dump = basil_test::run(dump_argv, {}, {.err = basil_test::Redirect::null(), .search_path = true}, 120s);
  ASSERT_EQ(dump.exit_code, 0);
  // Drawn, then drawn again from a fresh /nodestat.json without a reload
  // (15 s of the page's time, a refresh every 10).
  std::smatch drawn_times;
  ASSERT_TRUE(std::regex_search(dump.out, drawn_times, std::regex(R"re(<body data-drawn="([0-9]+)")re")))
      << "the page never drew the map:\n" << dump.out.substr(0, 4000);
  EXPECT_GE(std::stoi(drawn_times[1]), 2) << "the map was not drawn again";
  const auto drawn = dom_nodes(dump.out);

  std::map<std::uint32_t, std::uint64_t> reservation_of;
  for (const auto& r : inventory["reservations"])
    for (const auto nid : basil::NidList::parse(r["nodes"].get<std::string>())->expand())
      reservation_of[nid] = r["reservation_id"].get<std::uint64_t>();
  ASSERT_EQ(drawn.size(), inventory["nodes"].size()) << "the page draws each of INVENTORY's nodes once";
  std::size_t held = 0;
  for (const auto& n : inventory["nodes"]) {
    const auto nid = n["nid"].get<std::uint32_t>();
    const auto it = drawn.find(nid);
    ASSERT_NE(it, drawn.end()) << "nid " << nid << " is not drawn";
    EXPECT_EQ(it->second.state, n["state"].get<std::string>()) << "nid " << nid;
    const auto r = reservation_of.find(nid);
    EXPECT_EQ(it->second.res, r == reservation_of.end() ? "" : std::to_string(r->second)) << "nid " << nid;
    held += r != reservation_of.end() ? 1u : 0u;
  }
  EXPECT_EQ(held, 120u);
  EXPECT_EQ(dump.out.find("alice"), std::string::npos) << "the page names no user";

  // For people: what the page looks like, kept beside the test's logs.
  auto shot_argv = browser;
  const std::string shot = std::string(BASIL_BINARY_DIR) + "/Testing/nodestat-page.png";
  shot_argv.insert(shot_argv.end(), {"--window-size=1800,1200", "--screenshot=" + shot, url});
  const auto taken = basil_test::run(shot_argv, {}, {.err = basil_test::Redirect::null(), .search_path = true}, 120s);
  std::cout << "screenshot of the page: " << shot << " (chromium exit " << taken.exit_code << ")\n";
}

}  // namespace
}  // namespace basild
