#include "basild/core/slurm_names.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace basild {
namespace {

using Names = std::vector<std::string>;

TEST(NodeNameRuleTest, TheDefaultRuleNamesNidsAsSlurmOnACrayDoes) {
  const NodeNameRule rule;
  EXPECT_EQ(rule.format(), "nid%05d");
  EXPECT_EQ(rule.name(8), "nid00008");
  EXPECT_EQ(rule.name(123456), "nid123456");
  EXPECT_EQ(rule.nid("nid00008"), 8u);
  EXPECT_EQ(rule.nid("nid123456"), 123456u);
}

TEST(NodeNameRuleTest, ANameIsReadBackOnlyWhenTheRuleWouldWriteIt) {
  const NodeNameRule rule;
  for (const char* other : {"nid8", "nid0008", "nid000008", "nid", "nod00008", "nid00008x", "nid-0008", "nid4294967296",
                            "nid99999999999999999999", ""})
    EXPECT_FALSE(rule.nid(other).has_value()) << other;
  EXPECT_EQ(rule.nid("nid4294967295"), 4294967295u);
}

TEST(NodeNameRuleTest, PrefixSuffixAndWidthComeFromTheFormat) {
  auto rule = NodeNameRule::parse("cn%d.ib");
  ASSERT_TRUE(rule.is_ok()) << rule.status().message();
  EXPECT_EQ(rule->name(7), "cn7.ib");
  EXPECT_EQ(rule->nid("cn7.ib"), 7u);
  EXPECT_FALSE(rule->nid("cn07.ib").has_value());
  auto wide = NodeNameRule::parse("x%010d");
  ASSERT_TRUE(wide.is_ok());
  EXPECT_EQ(wide->name(42), "x0000000042");
}

TEST(NodeNameRuleTest, FormatsThatCannotNameASlurmNodeAreRefusedSayingWhy) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nid", "no %d"},
      {"nid%05d%d", "more than one"},
      {"nid%s", "%d or %0Wd"},
      {"nid%5d", "%d or %0Wd"},
      {"nid%011d", "1 to 10"},
      {"nid%00d", "1 to 10"},
      {"n id%d", "cannot be part"},
      {"nid%d;rm", "cannot be part"},
      {"nid%%%d", "cannot hold '%'"},
      {"%d", "bare number"},
  };
  for (const auto& [format, why] : cases) {
    auto r = NodeNameRule::parse(format);
    ASSERT_FALSE(r.is_ok()) << format;
    EXPECT_NE(r.status().message().find(why), std::string::npos) << format << ": " << r.status().message();
    EXPECT_NE(r.status().message().find("'" + format + "'"), std::string::npos) << r.status().message();
  }
}

TEST(HostlistTest, ExpandsRangesKeepingTheirWidth) {
  auto names = expand_hostlist("nid[00008-00011,00014],login1");
  ASSERT_TRUE(names.is_ok()) << names.status().message();
  EXPECT_EQ(*names, (Names{"nid00008", "nid00009", "nid00010", "nid00011", "nid00014", "login1"}));
  auto wide = expand_hostlist("n[98-101]");
  ASSERT_TRUE(wide.is_ok());
  EXPECT_EQ(*wide, (Names{"n98", "n99", "n100", "n101"}));
}

TEST(HostlistTest, SeveralBracketsInOneNameMultiplyOut) {
  auto names = expand_hostlist("c0-0c0s[2-3]n[0-1]");
  ASSERT_TRUE(names.is_ok()) << names.status().message();
  EXPECT_EQ(*names, (Names{"c0-0c0s2n0", "c0-0c0s2n1", "c0-0c0s3n0", "c0-0c0s3n1"}));
}

TEST(HostlistTest, AnEmptyListIsNoHosts) {
  auto names = expand_hostlist("");
  ASSERT_TRUE(names.is_ok());
  EXPECT_TRUE(names->empty());
}

TEST(HostlistTest, MalformedListsAreRefusedNamingTheItem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nid[1-3", "without its ']'"},
      {"nid1-3]", "without its '['"},
      {"nid[[1-3]]", "inside brackets"},
      {"nid[3-1]", "backwards"},
      {"nid[a-b]", "not a number"},
      {"nid[1,,2]", "not a number"},
      {"nid[]", "not a number"},
      {"a,,b", "empty item"},
      {"nid1;reboot", "does not allow"},
      {"nid$(x)", "does not allow"},
  };
  for (const auto& [list, why] : cases) {
    auto r = expand_hostlist(list);
    ASSERT_FALSE(r.is_ok()) << list;
    EXPECT_NE(r.status().message().find(why), std::string::npos) << list << ": " << r.status().message();
  }
}

TEST(HostlistTest, AHugeRangeIsRefusedBeforeAnythingIsBuilt) {
  auto r = expand_hostlist("nid[0-4294967295]");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("more than 1000000 hosts"), std::string::npos) << r.status().message();
  auto product = expand_hostlist("a[0-999]b[0-999]c[0-999]", 1000);
  ASSERT_FALSE(product.is_ok());
  auto many = expand_hostlist("a[1-600],b[1-600]", 1000);
  ASSERT_FALSE(many.is_ok());
  EXPECT_TRUE(expand_hostlist("a[1-500],b[1-500]", 1000).is_ok());
}

TEST(HostlistTest, CompressGroupsRunsOfOneWidthAndKeepsOtherNames) {
  EXPECT_EQ(compress_hostlist({"nid00011", "nid00008", "nid00009", "nid00014", "nid00010"}), "nid[00008-00011,00014]");
  EXPECT_EQ(compress_hostlist({"nid00008"}), "nid00008");
  EXPECT_EQ(compress_hostlist({"login", "nid00008", "nid00009", "login"}), "login,nid[00008-00009]");
  EXPECT_EQ(compress_hostlist({"n9", "n10", "n11"}), "n9,n[10-11]");
  EXPECT_EQ(compress_hostlist({}), "");
}

TEST(HostlistTest, CompressAndExpandAreInverseForRuleNames) {
  const NodeNameRule rule;
  Names names;
  for (std::uint32_t nid : {8u, 9u, 10u, 12u, 100u, 101u, 99999u}) names.push_back(rule.name(nid));
  auto back = expand_hostlist(compress_hostlist(names));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(*back, names);
}

}  // namespace
}  // namespace basild
