// The site's plugstack.conf arguments and the user's option value
// (slurm/spank/settings.h).
#include "slurm/spank/settings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace basild::spank {
namespace {

using Args = std::vector<std::string>;

TEST(SiteArgumentsTest, NoArgumentsLeaveTheLayoutToHwloc) {
  const SiteParse p = parse_site_arguments({});
  EXPECT_EQ(p.error, "");
  EXPECT_FALSE(p.settings.layout);
}

TEST(SiteArgumentsTest, ALayoutIsNumberedCoresFirstUnlessTold) {
  const SiteParse p = parse_site_arguments({"layout=2x8x2"});
  ASSERT_EQ(p.error, "");
  ASSERT_TRUE(p.settings.layout);
  EXPECT_EQ(p.settings.layout->sockets.at(0).cores.at(1).threads, (std::vector<unsigned>{1, 17}));
  const SiteParse t = parse_site_arguments({"numbering=threads", "layout=2x8x2"});
  ASSERT_EQ(t.error, "");
  EXPECT_EQ(t.settings.layout->sockets.at(0).cores.at(1).threads, (std::vector<unsigned>{2, 3}));
  EXPECT_EQ(parse_site_arguments({"layout=2x8x2", "numbering=cores"}).error, "");
}

TEST(SiteArgumentsTest, CpusListEachSocketCoreAndThreadsNumberAsAListOfNumbersAndRanges) {
  const SiteParse p = parse_site_arguments({"layout=1x2x2", "cpus=0,2,1,3"});
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.settings.layout->sockets.at(0).cores.at(0).threads, (std::vector<unsigned>{0, 2}));
  EXPECT_EQ(p.settings.layout->sockets.at(0).cores.at(1).threads, (std::vector<unsigned>{1, 3}));
  const SiteParse r = parse_site_arguments({"layout=2x2x1", "cpus=4-5,0-1"});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.settings.layout->sockets.at(0).cores.at(0).threads, (std::vector<unsigned>{4}));
  EXPECT_EQ(r.settings.layout->sockets.at(1).cores.at(1).threads, (std::vector<unsigned>{1}));
}

TEST(SiteArgumentsTest, AWrongArgumentIsRefusedWithASentenceNamingIt) {
  struct Case {
    Args args;
    const char* says;
  };
  const Case cases[] = {
      {{"layuot=2x8x2"}, "unknown argument 'layuot=2x8x2' (the arguments are layout=, numbering= and cpus=)"},
      {{"verbose"}, "unknown argument 'verbose'"},
      {{"layout=2x8"}, "layout=2x8 is not SOCKETSxCORESxTHREADS"},
      {{"layout=2x0x2"}, "layout=2x0x2 is not"},
      {{"layout=2x8x2x1"}, "layout=2x8x2x1 is not"},
      {{"layout=1000x1000x1000"}, "is not SOCKETSxCORESxTHREADS"},
      {{"layout=2x8x2", "layout=1x2x1"}, "layout= is given twice"},
      {{"numbering=cores"}, "numbering= and cpus= describe a layout= and there is none"},
      {{"layout=2x8x2", "numbering=intel"}, "numbering=intel is neither cores nor threads"},
      {{"layout=1x2x2", "cpus=0,1,2"}, "cpus=0,1,2 must give 4 different CPU numbers"},
      {{"layout=1x2x2", "cpus=0,1,2,2"}, "must give 4 different"},
      {{"layout=1x2x2", "cpus=0,1,,2"}, "must give 4 different"},
      {{"layout=1x2x2", "cpus=0-4"}, "must give 4 different"},
      {{"layout=1x2x2", "cpus=0-3", "numbering=cores"}, "numbering= and cpus= both number"},
  };
  for (const Case& c : cases) {
    const SiteParse p = parse_site_arguments(c.args);
    EXPECT_NE(p.error.find(c.says), std::string::npos) << c.args.front() << ": " << p.error;
    EXPECT_EQ(p.error.rfind("plugstack.conf: reduced_auto_affinity: ", 0), 0u) << p.error;
    EXPECT_FALSE(p.settings.layout);
  }
}

TEST(UserOptionTest, OnBindsAndVerboseAloneMeansOnAndPrints) {
  struct Case {
    const char* value;
    UserChoice::Mode mode;
    bool verbose;
  };
  const Case cases[] = {
      {"on", UserChoice::Mode::kOn, false},        {"off", UserChoice::Mode::kOff, false},
      {"on,v", UserChoice::Mode::kOn, true},       {"on, v", UserChoice::Mode::kOn, true},  // the paper's spelling
      {"v", UserChoice::Mode::kOn, true},          {"verbose", UserChoice::Mode::kOn, true},
      {"verbose,on", UserChoice::Mode::kOn, true}, {"help", UserChoice::Mode::kHelp, false},
      {"on,help", UserChoice::Mode::kHelp, false},
  };
  for (const Case& c : cases) {
    const UserParse p = parse_user_option(c.value);
    EXPECT_EQ(p.error, "") << c.value;
    EXPECT_EQ(p.choice.mode, c.mode) << c.value;
    EXPECT_EQ(p.choice.verbose, c.verbose) << c.value;
  }
}

TEST(UserOptionTest, AnUnknownWordOrOffWithAnotherIsRefusedNamingTheWords) {
  EXPECT_EQ(parse_user_option("yes").error,
            "--reduced-auto-affinity=yes: 'yes' is not one of on, off, verbose (v) and help (on,v binds and prints "
            "each task's mask)");
  EXPECT_NE(parse_user_option("").error, "");
  EXPECT_NE(parse_user_option("on,").error, "");
  EXPECT_NE(parse_user_option("ON").error, "");
  EXPECT_EQ(parse_user_option("off,v").error, "--reduced-auto-affinity=off,v: off takes no other word");
  EXPECT_NE(parse_user_option("on,off").error, "");
}

TEST(UserOptionTest, HelpNamesEveryWordAndTheManualPage) {
  const std::string h = help_text();
  for (const char* w : {"on ", "off ", "verbose ", "help ", "reduced_auto_affinity(8)", "--cpu-bind=mask_cpu"})
    EXPECT_NE(h.find(w), std::string::npos) << w;
}

}  // namespace
}  // namespace basild::spank
