#include "basild/core/drain_reason.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace basild {
namespace {

using basil::NodeRole;
using basil::NodeState;

AlpsNodeView condition(std::uint32_t nid, NodeState state, NodeRole role = NodeRole::kBatch) {
  return {nid, state, role};
}

struct Case {
  AlpsNodeView reason;
  std::string text;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {condition(11, NodeState::kDown), "basild: ALPS has nid 11 state DOWN"},
      {condition(0, NodeState::kSuspect), "basild: ALPS has nid 0 state SUSPECT"},
      {condition(4294967295u, NodeState::kAdmin), "basild: ALPS has nid 4294967295 state ADMIN"},
      {condition(8, NodeState::kRouting), "basild: ALPS has nid 8 state ROUTING"},
      {condition(8, NodeState::kUnavailable), "basild: ALPS has nid 8 state UNAVAILABLE"},
      {condition(8, NodeState::kUnknown), "basild: ALPS has nid 8 state UNKNOWN"},
      {condition(8, NodeState::kUp, NodeRole::kInteractive), "basild: ALPS has nid 8 role INTERACTIVE"},
      {condition(8, NodeState::kUp, NodeRole::kUnknown), "basild: ALPS has nid 8 role UNKNOWN"},
      {condition(8, NodeState::kSuspect, NodeRole::kInteractive),
       "basild: ALPS has nid 8 state SUSPECT, role INTERACTIVE"},
  };
  return all;
}

TEST(DrainReasonTest, EachReasonIsWrittenOneWayAndReadBack) {
  for (const auto& c : cases()) {
    EXPECT_EQ(format_drain_reason("basild:", c.reason), c.text);
    const auto parsed = parse_drain_reason("basild:", c.text);
    ASSERT_TRUE(parsed) << c.text;
    EXPECT_EQ(std::get<AlpsNodeView>(*parsed), c.reason) << c.text;
    EXPECT_EQ(drain_reason_nid(*parsed), c.reason.nid);
  }
}

TEST(DrainReasonTest, ANodeUpAndBatchHasNoReason) {
  EXPECT_EQ(format_drain_reason("basild:", condition(8, NodeState::kUp)), "");
  EXPECT_FALSE(parse_drain_reason("basild:", ""));
}

TEST(DrainReasonTest, TheSitesPrefixIsPartOfTheReason) {
  const DrainReason r = condition(8, NodeState::kDown);
  EXPECT_EQ(format_drain_reason("ALPS sync (site A):", r), "ALPS sync (site A): ALPS has nid 8 state DOWN");
  EXPECT_TRUE(parse_drain_reason("ALPS sync (site A):", "ALPS sync (site A): ALPS has nid 8 state DOWN"));
  EXPECT_FALSE(parse_drain_reason("ALPS sync (site A):", "basild: ALPS has nid 8 state DOWN"));
  EXPECT_FALSE(parse_drain_reason("basild:", "ALPS sync (site A): ALPS has nid 8 state DOWN"));
  EXPECT_FALSE(parse_drain_reason("", " ALPS has nid 8 state DOWN")) << "no prefix, no reason of basild's";
}

// Anything basild would not write itself is another's reason, whatever it
// shares with basild's.
TEST(DrainReasonTest, TextBasildDoesNotWriteIsNotItsReason) {
  const std::vector<std::string> others = {
      // Something after, or before.
      "basild: ALPS has nid 11 state DOWN -- admin: keep drained, bad fan",
      "basild: ALPS has nid 11 state DOWN ",
      "basild: ALPS has nid 11 state DOWN\n",
      std::string("basild: ALPS has nid 11 state DOWN") + '\0',
      " basild: ALPS has nid 11 state DOWN",
      "note basild: ALPS has nid 11 state DOWN",
      // Spaced, ordered or spelt otherwise.
      "basild:ALPS has nid 11 state DOWN",
      "basild: ALPS has nid 11  state DOWN",
      "basild: ALPS has nid 11 state DOWN,role INTERACTIVE",
      "basild: ALPS has nid 11 state DOWN, role  INTERACTIVE",
      "basild: ALPS has nid 11 role INTERACTIVE, state DOWN",
      "basild: ALPS has nid 11 state down",
      "basild: ALPS has nid 011 state DOWN",
      "basild: ALPS has nid +11 state DOWN",
      "basild: ALPS has nid -1 state DOWN",
      "basild: ALPS has nid 4294967296 state DOWN",
      "basild: ALPS has nid  state DOWN",
      "basild: ALPS has nid x state DOWN",
      // A condition basild does not name, or none.
      "basild: ALPS has nid 11 state UP",
      "basild: ALPS has nid 11 role BATCH",
      "basild: ALPS has nid 11 state UP, role INTERACTIVE",
      "basild: ALPS has nid 11 state DOWN, role BATCH",
      "basild: ALPS has nid 11 state BROKEN",
      "basild: ALPS has nid 11",
      "basild: ALPS has nid 11 state",
      "basild: ALPS has nid 11 state DOWN, role",
      "basild: ALPS has nid",
      "basild: ALPS",
      "basild:",
      // A hold spelt otherwise, or with something after it.
      "basild: ALPS holds nid 11 for reservation 5 of user alice, no Slurm job -- admin",
      "basild: ALPS holds nid 11 for reservation 05 of user alice, no Slurm job",
      "basild: ALPS holds nid 11 for reservation 5 of user , no Slurm job",
      "basild: ALPS holds nid 11 for reservation 5 of user al ice, no Slurm job",
      "basild: ALPS holds nid 11 for reservation 5 of user alice, bob, no Slurm job",
      "basild: ALPS holds nid 11 for reservation 5, no Slurm job",
      "basild: ALPS holds nid 11 for reservation 5 of user alice",
      "basild: ALPS holds nid 11 for reservation x of user alice, no Slurm job",
      "basild: ALPS holds nid 11 of user alice, no Slurm job",
  };
  for (const auto& text : others) EXPECT_FALSE(parse_drain_reason("basild:", text)) << text;
}

TEST(DrainReasonTest, ANodeHeldForAReservationNoSlurmJobOwnsIsWrittenOneWayAndReadBack) {
  const AlpsHold hold{12, 4711, "alice"};
  const std::string text = "basild: ALPS holds nid 12 for reservation 4711 of user alice, no Slurm job";
  EXPECT_EQ(format_drain_reason("basild:", hold), text);
  const auto parsed = parse_drain_reason("basild:", text);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(std::get<AlpsHold>(*parsed), hold);
  EXPECT_EQ(drain_reason_nid(*parsed), 12u);
  const AlpsHold dotted{0, 1, "svc.alps-2_x"};
  EXPECT_EQ(std::get<AlpsHold>(*parse_drain_reason("basild:", format_drain_reason("basild:", dotted))), dotted);
}

// A user name that is not one word (ALPS passes on what the reservation's
// maker gave) is written as "?": it cannot end the clause early or make the
// reason read as another.
TEST(DrainReasonTest, AUserNameThatIsNotOneWordIsWrittenAsAQuestionMark) {
  for (const std::string user : {"", "al ice", "alice, no Slurm job", "a\nb", "\xc3\xa9"}) {
    const std::string text = format_drain_reason("basild:", AlpsHold{3, 9, user});
    EXPECT_EQ(text, "basild: ALPS holds nid 3 for reservation 9 of user ?, no Slurm job") << user;
    const auto parsed = parse_drain_reason("basild:", text);
    ASSERT_TRUE(parsed);
    EXPECT_EQ(std::get<AlpsHold>(*parsed).user, "?");
  }
}

}  // namespace
}  // namespace basild
