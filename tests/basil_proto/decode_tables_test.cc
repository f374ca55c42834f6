// The decoder's structure tables (basil_proto/src/decode_tables.h) are
// complete: every element context the decoder can enter has a start handler
// named in kCtxSpecs, and every context that holds a NID list reads it in an
// end handler.
#include <cstddef>
#include <set>
#include <string_view>

#include <gtest/gtest.h>

#include "basil_proto/src/decode_tables.h"

namespace basil {
namespace {

using namespace decode_detail;  // NOLINT: the tables under test

// The contexts an element can open: the children of the element table, and
// Message (allowed under any context of a response).
std::set<Ctx> reachable_contexts() {
  std::set<Ctx> out{Ctx::kMessage};
  for (const ElemSpec& e : kElems) out.insert(e.ctx);
  return out;
}

TEST(DecodeTablesTest, ContextTableListsEveryContextInEnumOrder) {
  ASSERT_EQ(std::size(kCtxSpecs), kCtxCount);
  for (std::size_t i = 0; i < kCtxCount; ++i) {
    EXPECT_EQ(static_cast<std::size_t>(kCtxSpecs[i].ctx), i);
  }
}

TEST(DecodeTablesTest, EveryContextTheDecoderKnowsHasAStartHandler) {
  const std::set<Ctx> reachable = reachable_contexts();
  EXPECT_EQ(reachable.size() + 1, kCtxCount) << "every context but the document is an element's";
  for (Ctx c : reachable) {
    EXPECT_NE(ctx_spec(c).on_start, nullptr) << "context " << static_cast<int>(c);
  }
}

TEST(DecodeTablesTest, EveryContextHoldingANidListReadsItWhenItEnds) {
  for (const CtxSpec& c : kCtxSpecs) {
    if (c.text != Text::kData) continue;
    EXPECT_NE(c.on_end, nullptr) << "context " << static_cast<int>(c.ctx);
  }
}

TEST(DecodeTablesTest, BothRootsEndTheDocument) {
  EXPECT_EQ(ctx_spec(Ctx::kRespRoot).on_end, &end_root);
  EXPECT_EQ(ctx_spec(Ctx::kReqRoot).on_end, &end_root);
}

TEST(DecodeTablesTest, EveryOperationOfTheTableIsARequestsOperation) {
  for (const OpSpec& o : kOps) {
    EXPECT_EQ(op_spec(o.op), &o) << o.name;
    EXPECT_NE(o.dialects, kDAll) << o.name << " is in every dialect: no entry needed";
  }
  EXPECT_EQ(op_spec(kOpInventory), nullptr);
}

}  // namespace
}  // namespace basil
