// Node state from ALPS to Slurm with the real basild and the real emulator,
// and a stand-in scontrol (no Slurm daemon): a script that keeps each
// node's drain reason in a file (an empty file: not drained), lists them as
// `scontrol -o show node` does, and records every call's argv
// (NUL-separated) and its SLURM_CONF. Nodes go DOWN, INTERACTIVE and UP
// again in the emulator (basil-emulator node), as an admin does on the main
// system.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/basild/daemon/daemon_support.h"

namespace basild {
namespace {

using namespace std::chrono_literals;
using testing::Daemon;
using testing::json;
using testing::wait_until;
using Argv = std::vector<std::string>;

// The reasons' prefix: blanks and parentheses, so that a reason is seen to
// arrive as one argument.
constexpr const char* kPrefix = "ALPS sync (basild):";

class FakeSlurm {
 public:
  FakeSlurm() {
    std::filesystem::create_directories(dir_ + "/slurm");
    std::filesystem::create_directories(dir_ + "/calls");
    for (int nid = 8; nid <= 15; ++nid) set_reason("nid000" + std::to_string(nid / 10) + std::to_string(nid % 10), "");
    script_ = testing::write_script("scontrol", R"SH(D=')SH" + dir_ + R"SH('
n=$(ls "$D/calls" | wc -l)
printf '%s\0' "$@" > "$D/calls/$(printf %05d "$n")"
printf '%s' "${SLURM_CONF-unset}" > "$D/slurm_conf"
if [ "$1" = --all ]; then
  for f in "$D"/slurm/*; do
    name=$(basename "$f")
    [ -z "$5" ] || [ "$5" = "$name" ] || continue
    if [ -s "$f" ]; then
      printf 'NodeName=%s Arch=x86_64 State=IDLE+DRAIN ThreadsPerCore=1 ExtSensorsTemp=n/s Reason=%s [root@2026-01-01T00:00:00]\n' "$name" "$(cat "$f")"
    else
      printf 'NodeName=%s Arch=x86_64 State=IDLE ThreadsPerCore=1 ExtSensorsTemp=n/s\n' "$name"
    fi
  done
  exit 0
fi
name=${2#NodeName=}
[ -e "$D/slurm/$name" ] || { echo 'slurm_update error: Invalid node name specified' >&2; exit 1; }
case "$3" in
  State=DRAIN) printf '%s' "${4#Reason=}" > "$D/slurm/$name" ;;
  State=RESUME) : > "$D/slurm/$name" ;;
esac)SH");
  }

  std::string conf() const {
    return std::string("[slurm]\nnode_sync = true\nscontrol = \"") + script_ +
           "\"\nslurm_conf = \"/etc/slurm/cluster-a.conf\"\nreason_prefix = \"" + kPrefix +
           "\"\ntimeout = \"5s\"\n";
  }
  void set_reason(const std::string& node, const std::string& reason) const {
    basil_test::write_file(dir_ + "/slurm/" + node, reason);
  }
  std::string reason(const std::string& node) const { return basil_test::read_file(dir_ + "/slurm/" + node); }
  std::string slurm_conf() const { return basil_test::read_file(dir_ + "/slurm_conf"); }

  // Every update call's argv, in order (the listings left out).
  std::vector<Argv> updates() const {
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(dir_ + "/calls")) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::vector<Argv> out;
    for (const auto& f : files) {
      const std::string raw = basil_test::read_file(f);
      Argv argv;
      std::size_t start = 0;
      for (std::size_t nul = raw.find('\0'); nul != std::string::npos; nul = raw.find('\0', start)) {
        argv.push_back(raw.substr(start, nul - start));
        start = nul + 1;
      }
      if (!argv.empty() && argv[0] == "update") out.push_back(argv);
    }
    return out;
  }

 private:
  std::string dir_ = testing::make_temp_dir("fake-slurm");
  std::string script_;
};

void emulator_node(const Daemon& d, const std::string& args) {
  auto r = testing::run_command(testing::emulator_path() + " node " + args + " --state " + d.emu());
  ASSERT_EQ(r.exit_code, 0) << r.out;
}

// The audit entries of `kind` for node `name`, oldest first.
json node_events(const Daemon& d, const std::string& kind, const std::string& name) {
  json out = json::array();
  for (const auto& e : d.get("/v1/events?limit=1000").value("events", json::array()))
    if (e.value("kind", "") == kind && e["detail"].is_object() && e["detail"].value("node", "") == name)
      out.push_back(e);
  return out;
}

TEST(NodeSyncIntegrationTest, ALPSDownDrainsInSlurmUpResumesAndAnAdminsDrainStays) {
  FakeSlurm slurm;
  const std::string admin = "admin: \"bad DIMM\" $(reboot) `id`;\nticket 7";
  slurm.set_reason("nid00012", admin);
  Daemon d("node-sync", "tds-8", "", slurm.conf(), testing::fast_polls("200ms", "1m", "inventory"));
  d.start();
  EXPECT_NE(d.log().find("B0107 node sync to Slurm on"), std::string::npos) << d.log();

  emulator_node(d, "--nids 9,12 --set-state DOWN");
  emulator_node(d, "--nids 10 --role INTERACTIVE");
  const std::string down9 = std::string(kPrefix) + " ALPS has nid 9 state DOWN";
  const std::string inter10 = std::string(kPrefix) + " ALPS has nid 10 role INTERACTIVE";
  ASSERT_TRUE(wait_until([&] { return slurm.reason("nid00009") == down9 && slurm.reason("nid00010") == inter10; }, 20s))
      << d.log();
  EXPECT_EQ(slurm.updates(), (std::vector<Argv>{{"update", "NodeName=nid00009", "State=DRAIN", "Reason=" + down9},
                                                {"update", "NodeName=nid00010", "State=DRAIN", "Reason=" + inter10}}));
  EXPECT_EQ(slurm.slurm_conf(), "/etc/slurm/cluster-a.conf");
  EXPECT_EQ(slurm.reason("nid00012"), admin) << "the admin's drain is kept, not drained over";
  EXPECT_NE(d.log().find("B0507 node sync leaves alone: held-by-other nid00012"), std::string::npos) << d.log();
  const json drain = node_events(d, "node-drain", "nid00009");
  ASSERT_EQ(drain.size(), 1u) << d.get("/v1/events");
  EXPECT_EQ(drain[0]["nodes"], "9");
  EXPECT_EQ(drain[0]["detail"]["reason"], down9);
  EXPECT_EQ(drain[0]["detail"]["alps_state"], "DOWN");
  auto ctl = basil_test::run_shell(std::string(BASIL_BINARY_DIR) + "/basild/basilctl --socket " + d.socket() + " events");
  EXPECT_NE(ctl.out.find("node-drain"), std::string::npos) << ctl.out;

  emulator_node(d, "--nids 9,10,12 --set-state UP --role BATCH");
  ASSERT_TRUE(wait_until([&] { return slurm.reason("nid00009").empty() && slurm.reason("nid00010").empty(); }, 20s))
      << d.log();
  const auto updates = slurm.updates();
  ASSERT_EQ(updates.size(), 4u);
  EXPECT_EQ(updates[2], (Argv{"update", "NodeName=nid00009", "State=RESUME"}));
  EXPECT_EQ(updates[3], (Argv{"update", "NodeName=nid00010", "State=RESUME"}));
  EXPECT_EQ(node_events(d, "node-resume", "nid00009").size(), 1u);
  d.wait_for_poll();
  d.wait_for_poll();
  EXPECT_EQ(slurm.reason("nid00012"), admin) << "ALPS has it UP, but the drain is the admin's: never resumed";
  EXPECT_EQ(slurm.updates().size(), 4u);
  const json stats = d.get("/v1/stats")["node_sync"];
  EXPECT_EQ(stats["drains"], 2);
  EXPECT_EQ(stats["resumes"], 2);
  EXPECT_EQ(d.get("/v1/health")["node_sync"]["slurm"], "ok");
}

// An interactive session's reservation made on the main system (not
// through basild): Slurm is kept off its node until ALPS frees it.
TEST(NodeSyncIntegrationTest, ANodeAnInteractiveReservationHoldsIsDrainedNamingItAndResumedWhenReleased) {
  FakeSlurm slurm;
  Daemon d("node-sync-held", "tds-8", "", slurm.conf(), testing::fast_polls("200ms", "1m", "inventory"));
  d.start();
  auto made = testing::run_command(testing::emulator_path() + " reserve --user alice --width 1 --interactive --nodes 11" +
                                   " --state " + d.emu());
  ASSERT_EQ(made.exit_code, 0) << made.out;
  const std::string resid = made.out.substr(0, made.out.find('\n'));
  const std::string held = std::string(kPrefix) + " ALPS holds nid 11 for reservation " + resid +
                           " of user alice, no Slurm job";
  ASSERT_TRUE(wait_until([&] { return slurm.reason("nid00011") == held; }, 20s)) << slurm.reason("nid00011") << d.log();
  EXPECT_EQ(slurm.updates(), (std::vector<Argv>{{"update", "NodeName=nid00011", "State=DRAIN", "Reason=" + held}}));
  EXPECT_EQ(d.get("/v1/health")["node_sync"]["held_for_others"], 1);

  auto gone = testing::run_command(testing::emulator_path() + " release --resid " + resid + " --state " + d.emu());
  ASSERT_EQ(gone.exit_code, 0) << gone.out;
  ASSERT_TRUE(wait_until([&] { return slurm.reason("nid00011").empty(); }, 20s)) << d.log();
  EXPECT_EQ(slurm.updates().back(), (Argv{"update", "NodeName=nid00011", "State=RESUME"}));
  EXPECT_EQ(slurm.updates().size(), 2u);
  EXPECT_EQ(node_events(d, "node-resume", "nid00011").size(), 1u);
}

TEST(NodeSyncIntegrationTest, ASlurmThatCannotBeReachedIsLoggedAndBasildGoesOn) {
  const std::string script = testing::write_script(
      "scontrol-down", "echo 'slurm_load_node error: Unable to contact slurm controller (connect failure)' >&2; exit 1");
  Daemon d("node-sync-down", "tds-8", "",
           "[slurm]\nnode_sync = true\nscontrol = \"" + script + "\"\ntimeout = \"5s\"\n",
           testing::fast_polls("200ms", "1m", "inventory"));
  d.start();
  ASSERT_TRUE(wait_until([&] { return d.log().find("B0503") != std::string::npos; }, 20s)) << d.log();
  d.wait_for_poll();
  EXPECT_EQ(d.get("/v1/health")["status"], "degraded") << "ALPS is reached, but node sync fails";
  EXPECT_NE(d.get("/v1/health")["node_sync"]["slurm"].get<std::string>().find("Unable to contact"), std::string::npos);
  EXPECT_GT(d.get("/v1/stats")["node_sync"]["failures"].get<int>(), 1) << "tried again each cycle";
  const std::string log = d.log();
  EXPECT_EQ(log.find("B0503"), log.rfind("B0503")) << "logged once while the error stays the same";
}

}  // namespace
}  // namespace basild
