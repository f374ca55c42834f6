// The basil_reservation plugin's arguments for the node's CONFIRM.
#include "slurm/node_confirm_args.h"

#include <gtest/gtest.h>

#include <sstream>

#include "tests/support/files.h"

namespace basild::slurm {
namespace {

NodeConfirmSettings parsed(const std::vector<std::string_view>& args) {
  auto r = parse_node_confirm_args(args, "/usr/sbin/basil-slurm");
  EXPECT_TRUE(std::holds_alternative<NodeConfirmSettings>(r)) << std::get<std::string>(r);
  return std::holds_alternative<NodeConfirmSettings>(r) ? std::get<NodeConfirmSettings>(r) : NodeConfirmSettings{};
}

std::string refused(const std::vector<std::string_view>& args) {
  auto r = parse_node_confirm_args(args, "/usr/sbin/basil-slurm");
  EXPECT_TRUE(std::holds_alternative<std::string>(r));
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "";
}

TEST(NodeConfirmArgsTest, WithoutConfirmThePluginConfirmsNothing) {
  const auto s = parsed({});
  EXPECT_EQ(s.via, ConfirmVia::kNone);
  EXPECT_EQ(s.basil_slurm, "/usr/sbin/basil-slurm");
  EXPECT_FALSE(s.config);
}

TEST(NodeConfirmArgsTest, ConfirmThroughBasildRunsBasilSlurmWithTheJobReservationAndContainer) {
  const auto s = parsed({"confirm=basild", "config=/etc/basild/node.conf"});
  EXPECT_EQ(s.via, ConfirmVia::kBasild);
  EXPECT_EQ(node_confirm_argv(s, "15", 3, 7001),
            (std::vector<std::string>{"/usr/sbin/basil-slurm", "--config", "/etc/basild/node.conf", "node-confirm",
                                      "--job", "15", "--reservation", "3", "--pagg-id", "7001"}));
}

TEST(NodeConfirmArgsTest, ConfirmThroughTheNodesApbasilNamesIt) {
  const auto s = parsed({"basil_slurm=/opt/basil/sbin/basil-slurm", "confirm=apbasil:/opt/cray/alps/default/bin/apbasil"});
  EXPECT_EQ(s.via, ConfirmVia::kApbasil);
  EXPECT_EQ(node_confirm_argv(s, "15", 3, 7001),
            (std::vector<std::string>{"/opt/basil/sbin/basil-slurm", "node-confirm", "--job", "15", "--reservation",
                                      "3", "--pagg-id", "7001", "--apbasil", "/opt/cray/alps/default/bin/apbasil"}));
}

TEST(NodeConfirmArgsTest, UnknownArgumentsRelativePathsAndTwoConfirmsAreRefusedByName) {
  EXPECT_NE(refused({"confirm=slurmctld"}).find("\"confirm=slurmctld\": confirm= takes basild or apbasil:PATH"),
            std::string::npos);
  EXPECT_NE(refused({"confirm=apbasil:apbasil"}).find("\"confirm=apbasil:apbasil\""), std::string::npos);
  EXPECT_NE(refused({"config=basil-slurm.conf"}).find("not an argument of basil_reservation"), std::string::npos);
  EXPECT_NE(refused({"confirm=basild", "confirm=basild"}).find("given twice"), std::string::npos);
  EXPECT_NE(refused({"verbose"}).find("\"verbose\""), std::string::npos);
}

// The shipped plugstack.conf's plugin line is the container path: the batch
// job's node CONFIRMs through basild.
TEST(NodeConfirmArgsTest, TheShippedPlugstackConfConfirmsOnTheNodeThroughBasild) {
  std::istringstream conf(basil_test::read_file(std::string(BASIL_TEST_DATA) + "/../../conf/plugstack.conf"));
  std::vector<std::string> lines;
  for (std::string line; std::getline(conf, line);)
    if (line.starts_with("required ") && line.find("/basil_reservation.so") != std::string::npos) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u);
  std::istringstream words(lines[0]);
  std::vector<std::string> all;
  for (std::string w; words >> w;) all.push_back(w);
  ASSERT_GE(all.size(), 2u);
  const std::vector<std::string_view> args(all.begin() + 2, all.end());
  EXPECT_EQ(parsed(args).via, ConfirmVia::kBasild);
}

}  // namespace
}  // namespace basild::slurm
