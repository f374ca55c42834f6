#include "basil_proto/model.h"

#include <gtest/gtest.h>

namespace basil {
namespace {

TEST(ModelTest, EnumNamesRoundTrip) {
  EXPECT_EQ(parse_enum<NodeState>("UNAVAILABLE"), NodeState::kUnavailable);
  EXPECT_EQ(parse_enum<NodeState>("up"), std::nullopt);  // case-sensitive
  EXPECT_EQ(parse_enum<PGovernor>("ondemand"), PGovernor::kOndemand);
  EXPECT_EQ(parse_enum<Method>("UNDEFINED"), Method::kUndefined);
  EXPECT_EQ(parse_enum<ItemStatus>("SUSPEND"), ItemStatus::kSuspend);
  EXPECT_EQ(parse_enum<ErrorSource>("BACKEND"), ErrorSource::kBackend);
  EXPECT_EQ(parse_enum<GpcMode>(""), std::nullopt);
}

TEST(ModelTest, NoEntryForResIdIsReservationGone) {
  auto r = make_failure(Dialect::k1_3, "1.3", Method::kRelease, ErrorClass::kPermanent,
                        ErrorSource::kBackend, "ALPS error: apsched: No entry for resId 9");
  Status s = r.error();
  EXPECT_EQ(s.code(), Code::kReservationGone);
  EXPECT_FALSE(s.transient());
  EXPECT_EQ(s.message(), "PERMANENT ALPS BACKEND error: ALPS error: apsched: No entry for resId 9");
}

TEST(ModelTest, CannotFindResIdIsReservationUnknown) {
  auto r = make_failure(Dialect::k1_0, "1.0", Method::kConfirm, ErrorClass::kPermanent,
                        ErrorSource::kBackend, "ALPS error: apsched: cannot find resId 12");
  EXPECT_EQ(r.error().code(), Code::kReservationUnknown);
}

TEST(ModelTest, TransientFailureIsTransient) {
  auto r = make_failure(Dialect::k1_3, "1.3", Method::kReserve, ErrorClass::kTransient,
                        ErrorSource::kBackend, "ALPS error: apsched: request exceeds max nodes, alloc");
  EXPECT_EQ(r.error().code(), Code::kAlpsTransient);
  EXPECT_TRUE(r.error().transient());
}

TEST(ModelTest, SuccessHasNoError) {
  Response r;
  EXPECT_TRUE(r.error().is_ok());
}

TEST(ModelTest, NodeCountsProcessorsInEveryLayout) {
  Node xc;
  xc.sockets.resize(2);
  for (auto& sock : xc.sockets) {
    sock.segments.resize(1);
    sock.segments[0].compute_units.resize(8);
    for (auto& cu : sock.segments[0].compute_units) cu.processors.resize(2);
    sock.segments[0].memory.push_back(Memory{MemoryType::kOS, 4, 8388608, {}});
  }
  EXPECT_EQ(xc.processor_count(), 32u);
  EXPECT_EQ(xc.compute_unit_count(), 16u);
  EXPECT_EQ(xc.memory_mb(), 65536u);
  EXPECT_FALSE(xc.allocated());
  xc.sockets[1].segments[0].compute_units[3].processors[1].allocations.push_back(7);
  EXPECT_TRUE(xc.allocated());

  Node xt;
  xt.processors.resize(12);
  xt.memory.push_back(Memory{MemoryType::kOS, 4, 4096000, {}});
  EXPECT_EQ(xt.processor_count(), 12u);
  EXPECT_EQ(xt.compute_unit_count(), 12u);
  EXPECT_EQ(xt.memory_mb(), 16000u);
}

TEST(StatusTest, LocatedErrorsSayWhere) {
  Status s(Code::kStructure, "Node outside NodeArray");
  s.at(3, 14, "/BasilResponse/ResponseData/Inventory/Node");
  EXPECT_EQ(s.to_string(), "3:14: Node outside NodeArray (at /BasilResponse/ResponseData/Inventory/Node)");
  EXPECT_EQ(code_name(Code::kReservationGone), "reservation_gone");
  EXPECT_TRUE(is_transient(Code::kTimeout));
  EXPECT_FALSE(is_transient(Code::kMalformed));
}

}  // namespace
}  // namespace basil
