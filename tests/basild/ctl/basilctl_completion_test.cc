// basilctl's bash completion (conf/bash-completion/basilctl) in a real
// bash: every command `basilctl --help` lists is offered, and a command's
// own options after it.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "tests/support/subprocess.h"

namespace {

const std::string kCompletion = std::string(BASIL_TEST_DATA) + "/../../conf/bash-completion/basilctl";

// What completing `line` (the cursor at its end) offers.
std::set<std::string> offered(const std::string& line) {
  const std::string script = "source '" + kCompletion + "'\n"
                             "COMP_LINE='" + line + "'\n"
                             "read -ra COMP_WORDS <<< \"$COMP_LINE\"\n"
                             "[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')\n"
                             "COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
                             "_basilctl\n"
                             "printf '%s\\n' \"${COMPREPLY[@]}\"\n";
  const auto r = basil_test::run({"/bin/bash", "--norc", "-c", script});
  std::set<std::string> out;
  std::istringstream in(r.out);
  for (std::string w; std::getline(in, w);)
    if (!w.empty()) out.insert(w);
  return out;
}

TEST(BasilctlCompletionTest, EveryCommandOfTheHelpIsOfferedAndEachCommandsOptionsAfterIt) {
  const auto help = basil_test::run({std::string(BASIL_BINARY_DIR) + "/basild/basilctl", "--help"}, {},
                                    {.err = basil_test::Redirect::to_stdout()});
  std::set<std::string> commands;
  const std::regex line(R"(^  ([a-z][a-z-]+)\b)");
  std::istringstream in(help.out);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, line)) commands.insert(m[1]);
  }
  ASSERT_GE(commands.size(), 15u) << help.out;
  const auto first = offered("basilctl ");
  for (const auto& c : commands) EXPECT_TRUE(first.count(c)) << c << " is not offered";
  EXPECT_TRUE(first.count("--epoch"));
  EXPECT_EQ(offered("basilctl no"), (std::set<std::string>{"nodestat"}));
  EXPECT_EQ(offered("basilctl --json ev"), (std::set<std::string>{"events"}));
  EXPECT_TRUE(offered("basilctl events --").count("--since"));
  EXPECT_TRUE(offered("basilctl plan --ntasks-per").count("--ntasks-per-node"));
  EXPECT_EQ(offered("basilctl plan --allocation s"), (std::set<std::string>{"sub-node"}));
}

}  // namespace
