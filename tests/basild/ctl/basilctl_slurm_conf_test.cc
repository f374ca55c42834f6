// basilctl slurm-conf as an admin runs it: the real binary on the INVENTORY
// the real emulator binary answers, and on basild's inventory.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/basild/daemon/daemon_support.h"
#include "tests/support/files.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

using basil_test::Ran;

const std::string kBasilctl = std::string(BASIL_BINARY_DIR) + "/basild/basilctl";
const std::string kEmulator = std::string(BASIL_BINARY_DIR) + "/emulator/basil-emulator";

// This test's files, removed with its process.
const std::string& dir() {
  static const std::string d = basil_test::scratch_dir("basilctl-slurm-conf");
  return d;
}

Ran basilctl(std::vector<std::string> args, const std::string& input = "") {
  args.insert(args.begin(), kBasilctl);
  return basil_test::run(args, input, {.err = basil_test::Redirect::pipe()});
}

std::string inventory_request(const std::string& protocol) {
  return "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"" + protocol +
         "\" method=\"QUERY\" type=\"INVENTORY\"/>\n";
}

// The emulator's answer to QUERY INVENTORY at `protocol` for the system in
// `state`, in a file; its path.
std::string inventory_file(const std::string& state, const std::string& protocol, const std::string& name) {
  Ran r = basil_test::run({kEmulator, "--state", state}, inventory_request(protocol), {.err = basil_test::Redirect::pipe()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("status=\"SUCCESS\""), std::string::npos) << r.out.substr(0, 500);
  const std::string path = dir() + "/" + name;
  basil_test::write_file(path, r.out);
  return path;
}

// A fresh emulated `preset` and its INVENTORY file (`tag`: the test's own).
std::string preset_inventory(const std::string& preset, const std::string& protocol, const std::string& tag) {
  const std::string state = dir() + "/" + tag + "-" + preset;
  Ran r = basil_test::run({kEmulator, "init", "--preset", preset, "--state", state}, "",
                          {.err = basil_test::Redirect::pipe()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return inventory_file(state, protocol, tag + "-" + preset + ".xml");
}

std::vector<std::string> without_comments(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::string line = text.substr(start, nl - start);
    if (!line.empty() && line[0] != '#') out.push_back(line);
    start = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

TEST(BasilctlSlurmConfTest, EachPresetsInventoryGivesItsNodeLines) {
  const struct {
    const char* preset;
    const char* protocol;  // the highest of the preset's CLE
    std::vector<std::string> lines;
  } cases[] = {
      {"tds-8", "1.3",
       {"NodeName=nid[00008-00015] CPUs=32 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=65536"}},
      {"xc30-2256", "1.3",
       {"NodeName=nid[00024-02279] CPUs=32 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=65536"}},
      {"xk7-gpu", "1.2",
       {"NodeName=nid[00016-00095,00128-00223] CPUs=16 Sockets=2 CoresPerSocket=8 ThreadsPerCore=1 "
        "RealMemory=32768 Gres=gpu:1"}},
      {"xt5-1844", "1.1",
       {"NodeName=nid[00016-00095,00128-00223,00256-00351,00384-00479,00512-00607,00640-00735,00768-00863,"
        "00896-00991,01024-01119,01152-01247,01280-01375,01408-01503,01536-01631,01664-01759,01792-01887,"
        "01920-02015,02048-02143,02176-02271,02304-02399,02432-02467] CPUs=12 Sockets=2 CoresPerSocket=6 "
        "ThreadsPerCore=1 RealMemory=16000"}},
  };
  for (const auto& c : cases) {
    const std::string file = preset_inventory(c.preset, c.protocol, "lines");
    Ran r = basilctl({"slurm-conf", "--inventory", file});
    ASSERT_EQ(r.exit_code, 0) << c.preset << ": " << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(without_comments(r.out), c.lines) << c.preset;
    // The same from standard input.
    Ran in = basilctl({"slurm-conf", "--inventory", "-"}, basil_test::read_file(file));
    EXPECT_EQ(in.out, r.out) << c.preset << ": " << in.err;
  }
}

TEST(BasilctlSlurmConfTest, TopologyFollowsTheCnamesAndTheSitesGroupChoice) {
  const std::string file = preset_inventory("tds-8", "1.3", "topology");
  Ran r = basilctl({"slurm-conf", "--inventory", file, "--topology"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(without_comments(r.out),
            (std::vector<std::string>{"SwitchName=c0-0c0s2 Nodes=nid[00008-00011]",
                                      "SwitchName=c0-0c0s3 Nodes=nid[00012-00015]",
                                      "SwitchName=c0-0c0 Switches=c0-0c0s[2-3]", "SwitchName=c0-0 Switches=c0-0c0",
                                      "SwitchName=g0-0 Switches=c0-0", "SwitchName=top Switches=g0-0"}));
  Ran flat = basilctl({"slurm-conf", "--inventory", file, "--topology", "--groups=no", "--name-format", "cn%d"});
  ASSERT_EQ(flat.exit_code, 0) << flat.err;
  EXPECT_EQ(without_comments(flat.out),
            (std::vector<std::string>{"SwitchName=c0-0c0s2 Nodes=cn[8-9],cn[10-11]", "SwitchName=c0-0c0s3 Nodes=cn[12-15]",
                                      "SwitchName=c0-0c0 Switches=c0-0c0s[2-3]", "SwitchName=c0-0 Switches=c0-0c0",
                                      "SwitchName=top Switches=c0-0"}));
}

TEST(BasilctlSlurmConfTest, CheckExitsZeroOnAgreementOneOnDifferencesTwoOnTrouble) {
  const std::string file = preset_inventory("tds-8", "1.3", "check");
  const std::string conf_dir = dir() + "/etc";
  std::filesystem::create_directories(conf_dir);
  const std::string nodes = basilctl({"slurm-conf", "--inventory", file}).out;
  basil_test::write_file(conf_dir + "/nodes.conf", nodes);
  // A relative Include is in slurm.conf's directory, wherever basilctl runs; %c is the ClusterName.
  basil_test::write_file(conf_dir + "/slurm.conf", "ClusterName=tds\nInclude %c-nodes.conf\nPartitionName=b Nodes=ALL\n");
  basil_test::write_file(conf_dir + "/tds-nodes.conf", "Include nodes.conf\n");
  Ran same = basilctl({"slurm-conf", "--inventory", file, "--check", conf_dir + "/slurm.conf"});
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(same.out, "");
  EXPECT_EQ(same.err, "basilctl: slurm-conf: " + conf_dir + "/slurm.conf agrees with ALPS on 8 nodes\n");

  basil_test::write_file(conf_dir + "/nodes.conf",
                         "NodeName=DEFAULT Sockets=2 CoresPerSocket=8 ThreadsPerCore=2\n"
                         "NodeName=nid[00008-00014] RealMemory=64000\nNodeName=nid00099 RealMemory=65536\n");
  Ran differ = basilctl({"slurm-conf", "--inventory", file, "--check", conf_dir + "/slurm.conf"});
  EXPECT_EQ(differ.exit_code, 1) << differ.err;
  EXPECT_EQ(differ.out,
            "nid00015: in ALPS, not in slurm.conf\n"
            "nid00099: in slurm.conf (" + conf_dir + "/nodes.conf:3), not in ALPS\n"
            "nid[00008-00014]: RealMemory is 64000 in slurm.conf (" + conf_dir + "/nodes.conf:2), 65536 in ALPS\n");
  EXPECT_EQ(differ.err, "basilctl: slurm-conf: 3 differences between " + conf_dir + "/slurm.conf and ALPS\n");

  basil_test::write_file(conf_dir + "/bad.conf", "NodeName=nid[00008-00011 CPUs=32\n");
  Ran bad = basilctl({"slurm-conf", "--inventory", file, "--check", conf_dir + "/bad.conf"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "basilctl: slurm-conf: " + conf_dir +
                         "/bad.conf:1: NodeName: host list item 'nid[00008-00011': a '[' without its ']'\n");
  EXPECT_EQ(bad.out, "");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"slurm-conf", "--inventory", file, "--check", dir() + "/no-such.conf"},
           {"slurm-conf", "--inventory", dir() + "/no-such.xml"},
           {"slurm-conf", "--inventory", conf_dir + "/slurm.conf"},  // not BASIL
           {"slurm-conf", "--inventory", file, "--check", conf_dir + "/slurm.conf", "--topology"},
           {"slurm-conf", "--groups", "yes"},
           {"slurm-conf", "--name-format", "nid%s"},
           {"slurm-conf", "--bogus"},
           {"--json", "slurm-conf", "--inventory", file}}) {
    Ran r = basilctl(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_NE(r.err, "") << args.back();
  }
  Ran gone = basilctl({"--socket", dir() + "/no.sock", "slurm-conf"});
  EXPECT_EQ(gone.exit_code, 3) << gone.err;
}

TEST(BasilctlSlurmConfTest, BasildsInventoryGivesWhatTheInventoryFileGives) {
  basild::testing::Daemon d("slurm-conf", "xk7-gpu");
  d.start();
  const std::string file = inventory_file(d.emu(), "1.2", "xk7-basild.xml");
  for (const bool topology : {false, true}) {
    std::vector<std::string> args = {"--socket", d.socket(), "slurm-conf"};
    if (topology) args.push_back("--topology");
    Ran from_basild = basilctl(args);
    ASSERT_EQ(from_basild.exit_code, 0) << from_basild.err;
    args.insert(args.end(), {"--inventory", file});
    Ran from_file = basilctl(args);
    ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
    EXPECT_EQ(without_comments(from_basild.out), without_comments(from_file.out));
    EXPECT_NE(from_basild.out.find(topology ? "SwitchName=top Switches=c0-[0-1]\n" : " Gres=gpu:1\n"),
              std::string::npos)
        << from_basild.out;
  }
  basil_test::write_file(dir() + "/xk7.conf", basilctl({"slurm-conf", "--inventory", file}).out);
  Ran check = basilctl({"--socket", d.socket(), "slurm-conf", "--check", dir() + "/xk7.conf"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

}  // namespace
