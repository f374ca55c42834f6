// The log message catalogue (basild/daemon/log_ids.h) and basild(8)'s LOG
// MESSAGES list the same ids at the same levels. (That every id basild
// logs is in the catalogue, at the level it is logged with, is checked by
// the compiler: Logger takes only catalogued ids.)
#include "basild/daemon/log_ids.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace basild {
namespace {

std::map<std::string, std::string> man_page_ids() {
  std::ifstream in(std::string(BASIL_TEST_DATA) + "/../../man/man8/basild.8");
  std::map<std::string, std::string> out;
  std::string line;
  const std::regex entry(R"(^\.B (B[0-9]{4}) ([a-z]+)$)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, entry)) out[m[1]] = m[2];
  }
  return out;
}

std::string level_word(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kNotice: return "notice";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
  }
  return "?";
}

TEST(LogIdsTest, TheCatalogueAndTheManPageListTheSameIdsAtTheSameLevels) {
  const auto man = man_page_ids();
  ASSERT_FALSE(man.empty()) << "basild(8) has no LOG MESSAGES entries";
  std::map<std::string, std::string> catalogue;
  for (const auto& e : kLogIds) catalogue[std::string(e.id)] = level_word(e.level);
  EXPECT_EQ(catalogue, man);
}

TEST(LogIdsTest, EachIdIsCataloguedOnceWithAMeaning) {
  std::set<std::string_view> seen;
  for (const auto& e : kLogIds) {
    EXPECT_TRUE(seen.insert(e.id).second) << e.id << " twice";
    EXPECT_FALSE(e.meaning.empty()) << e.id;
  }
}

}  // namespace
}  // namespace basild
