// The store in front of the state database that keeps what ALPS did while
// the database cannot record it (basild/core/state_store_replay.h), over
// the in-memory store with its writes failing on demand, as a full disk
// fails the SQLite store's.
#include "basild/core/state_store_replay.h"

#include <gtest/gtest.h>

#include "tests/support/memory_store.h"

namespace basild {
namespace {

class ReplayingStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(store_.record_reserved(std::nullopt, basild_test::job_reservation(7, "1001"))); }
  ResState state_of(std::uint64_t id) {
    auto r = store_.find(id);
    EXPECT_TRUE(r && *r);
    return r && *r ? (*r)->state : ResState::kGone;
  }
  ResState recorded_state_of(std::uint64_t id) {
    auto r = memory_.find(id);
    EXPECT_TRUE(r && *r);
    return r && *r ? (*r)->state : ResState::kGone;
  }

  basild_test::MemoryStore memory_;
  ReplayingStore store_{memory_};
};

TEST_F(ReplayingStoreTest, AFailedWriteMakesTheStoreFailingUntilAWriteSucceeds) {
  EXPECT_FALSE(store_.health().failing);
  memory_.fail_writes();
  auto intent = store_.record_intent("1002", "bob", "{}");
  ASSERT_FALSE(intent);
  EXPECT_EQ(intent.status().code(), basil::Code::kLimitExceeded);
  EXPECT_TRUE(store_.health().failing);
  EXPECT_EQ(store_.health().failures, 1u);
  EXPECT_NE(store_.health().last_error.find("is full"), std::string::npos) << store_.health().last_error;
  // Reads go on and do not clear it.
  EXPECT_TRUE(store_.list_active());
  EXPECT_TRUE(store_.health().failing);

  memory_.accept_writes();
  EXPECT_TRUE(store_.record_intent("1002", "bob", "{}"));
  EXPECT_FALSE(store_.health().failing);
  EXPECT_EQ(store_.health().failures, 1u);
}

TEST_F(ReplayingStoreTest, AChangeTheStoreRefusesIsNoDatabaseFailure) {
  auto st = store_.mark_confirmed(99, 1);  // no such reservation
  ASSERT_FALSE(st);
  EXPECT_EQ(st.code(), basil::Code::kInvalidValue);
  EXPECT_FALSE(is_database_failure(st));
  EXPECT_FALSE(store_.health().failing);
  EXPECT_EQ(store_.health().failures, 0u);
  EXPECT_EQ(store_.health().waiting, 0u);
}

TEST_F(ReplayingStoreTest, AConfirmationTheDatabaseFailsIsKeptShownAndWrittenWhenItTakesWrites) {
  memory_.fail_writes();
  auto st = store_.mark_confirmed(7, 4242);
  ASSERT_FALSE(st);
  EXPECT_TRUE(is_database_failure(st));
  EXPECT_EQ(store_.health().waiting, 1u);
  // Not written, but read back as confirmed.
  EXPECT_EQ(recorded_state_of(7), ResState::kReserved);
  EXPECT_EQ(state_of(7), ResState::kConfirmed);
  EXPECT_EQ((*store_.find(7))->pagg_id, 4242u);
  // Still failing: replay keeps it.
  EXPECT_FALSE(store_.replay());
  EXPECT_EQ(store_.health().waiting, 1u);

  memory_.accept_writes();
  EXPECT_TRUE(store_.replay());
  EXPECT_EQ(store_.health().waiting, 0u);
  EXPECT_EQ(store_.health().replayed, 1u);
  EXPECT_EQ(recorded_state_of(7), ResState::kConfirmed);
  EXPECT_EQ((*memory_.find(7))->pagg_id, 4242u);
  EXPECT_FALSE(store_.health().failing);
}

TEST_F(ReplayingStoreTest, AReleaseKeptWhileFailingIsNotActiveSoItCannotVanish) {
  memory_.fail_writes();
  EXPECT_FALSE(store_.mark_releasing(7, "release requested"));
  EXPECT_FALSE(store_.mark_released(7, "RELEASE proved it gone"));
  EXPECT_EQ(store_.health().waiting, 2u);
  // An INVENTORY that no longer lists it reads the active ones: not there.
  auto active = store_.list_active();
  ASSERT_TRUE(active);
  EXPECT_TRUE(active->empty());
  // A RESERVE for the same job does not find it held.
  auto mine = store_.find_by_batch_id("1001");
  ASSERT_TRUE(mine);
  ASSERT_EQ(mine->size(), 1u);
  EXPECT_EQ(mine->front().state, ResState::kReleased);

  memory_.accept_writes();
  // The next write of any kind writes the kept changes first, in order.
  EXPECT_TRUE(store_.touch_seen({}));
  EXPECT_EQ(recorded_state_of(7), ResState::kReleased);
  EXPECT_EQ(store_.health().replayed, 2u);
  auto audit = memory_.list_audit(WallTime{}, 100);
  ASSERT_TRUE(audit);
  EXPECT_EQ(audit->back().kind, "release");
}

TEST_F(ReplayingStoreTest, WhileKeptChangesCannotBeWrittenNoOtherWriteIsTried) {
  memory_.fail_writes();
  EXPECT_FALSE(store_.mark_confirmed(7, 1));
  const auto refused = memory_.writes_refused();
  auto intent = store_.record_intent("1003", "carol", "{}");
  ASSERT_FALSE(intent);
  EXPECT_EQ(intent.status().code(), basil::Code::kLimitExceeded);
  // Only the kept change was tried again.
  EXPECT_EQ(memory_.writes_refused(), refused + 1);
}

TEST_F(ReplayingStoreTest, AKeptChangeTheStoreRefusesLaterIsDropped) {
  memory_.fail_writes();
  EXPECT_FALSE(store_.mark_confirmed(7, 1));
  memory_.accept_writes();
  ASSERT_TRUE(memory_.mark_gone(7, "absent from INVENTORY"));  // moved on beside this store
  EXPECT_TRUE(store_.replay());
  EXPECT_EQ(store_.health().dropped, 1u);
  EXPECT_EQ(store_.health().replayed, 0u);
  EXPECT_EQ(recorded_state_of(7), ResState::kGone);
}

TEST_F(ReplayingStoreTest, AWriteMadeBesideItCountsAsItsOwn) {
  store_.note_write(basild_test::MemoryStore::disk_full());
  EXPECT_TRUE(store_.health().failing);
  EXPECT_EQ(store_.health().failures, 1u);
  store_.note_write(basil::Status::ok());
  EXPECT_FALSE(store_.health().failing);
}

}  // namespace
}  // namespace basild
