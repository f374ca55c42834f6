// The state store's upkeep (basild/core/state_store.h StoreUpkeep):
// retention, once for each store ("Sqlite" and "Memory"); then the SQLite
// store's own: freed pages given back to the file system (or, for a
// database made before that, reused), the file checked while it is open,
// an empty file refused at open, and the mode of the files it creates.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/basild/io/store_fixture.h"

namespace basild {
namespace {

using namespace std::chrono_literals;
using namespace store_testing;

// ---------------------------------------------------------------- retention, for each store

class StoreRetentionTest : public StoreContractTest {
 protected:
  void SetUp() override {
    StoreContractTest::SetUp();
    store_ = make_store();
    ASSERT_TRUE(store_);
    upkeep_ = store_.get();
  }
  // Runs `what` at `age` before now.
  template <typename What>
  void at(std::chrono::milliseconds age, What what) {
    now_ -= age;
    what();
    now_ += age;
  }

  std::unique_ptr<StateStore> store_;
  StoreUpkeep* upkeep_ = nullptr;
};

INSTANTIATE_TEST_SUITE_P(, StoreRetentionTest, ::testing::Values("Sqlite", "Memory"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

TEST_P(StoreRetentionTest, PruneDeletesWhatEndedBeforeTheCutoffsAndNothingActivePendingOrLive) {
  StateStore& s = *store_;
  at(40 * 24h, [&] {
    ASSERT_TRUE(s.record_reserved(std::nullopt, reservation(1, "active")));     // active for 40 days
    ASSERT_TRUE(s.record_reserved(std::nullopt, reservation(2, "released")));
    ASSERT_TRUE(s.record_reserved(std::nullopt, reservation(3, "gone")));
    ASSERT_TRUE(s.record_reserved(std::nullopt, reservation(4, "recent")));
    ASSERT_TRUE(s.record_intent("old-pending", "alice", "p"));                  // intent 1: pending
    auto settled = s.record_intent("old-settled", "alice", "p");                // intent 2
    ASSERT_TRUE(settled);
    ASSERT_TRUE(s.settle_intent_dropped(*settled, "none"));
    ASSERT_TRUE(s.sync_jobs("squeue", {"live", "ended"}));
    ASSERT_TRUE(s.record_node_events({{0, {}, 1, "state", "UP", "DOWN", ""}}));
  });
  at(20 * 24h, [&] {
    ASSERT_TRUE(s.mark_released(2, "gone"));
    ASSERT_TRUE(s.mark_gone(3, "absent"));
    ASSERT_TRUE(s.sync_jobs("squeue", {"live"}));  // "ended" ends
  });
  at(1 * 24h, [&] { ASSERT_TRUE(s.mark_released(4, "gone")); });
  ASSERT_TRUE(s.record_node_events({{0, {}, 2, "state", "UP", "DOWN", ""}}));

  RetentionCutoffs c;
  c.history_before = now_ - 30 * 24h;  // audit_days = 30
  c.ended_before = now_ - 7 * 24h;     // released_days = 7
  auto pruned = upkeep_->prune(c, 1000);
  ASSERT_TRUE(pruned) << pruned.status().message();
  EXPECT_EQ(pruned->reservations, 2u);
  EXPECT_EQ(pruned->intents, 1u);
  EXPECT_EQ(pruned->jobs, 1u);
  EXPECT_EQ(pruned->node_events, 1u);
  // Every audit entry of 40 days ago: 4 reserves, 2 intents and the drop.
  EXPECT_EQ(pruned->audit, 7u);

  EXPECT_TRUE(*s.find(1));
  EXPECT_FALSE(*s.find(2));
  EXPECT_FALSE(*s.find(3));
  EXPECT_TRUE(*s.find(4));
  auto pending = s.list_pending_intents();
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ(pending->front().batch_id, "old-pending");
  EXPECT_FALSE(*s.find_intent(2));
  auto jobs = s.list_jobs(false);
  ASSERT_TRUE(jobs);
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ(jobs->front().job_id, "live");
  auto events = s.list_node_events(WallTime{}, 100);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ(events->front().nid, 2u);
  auto audit = s.list_audit(WallTime{}, 1000);
  ASSERT_TRUE(audit);
  for (const auto& e : *audit) EXPECT_GE(e.time, c.history_before) << e.kind;

  // Pruned again: nothing left to prune.
  auto again = upkeep_->prune(c, 1000);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->total(), 0u);
}

TEST_P(StoreRetentionTest, PruneDeletesAtMostItsLimitOldestFirst) {
  StateStore& s = *store_;
  for (int i = 0; i < 5; ++i) {
    at((100 - i) * 24h, [&] {
      AuditEntry e;
      e.kind = "note";
      e.detail = "{\"n\":" + std::to_string(i) + "}";
      ASSERT_TRUE(s.audit(e));
    });
  }
  RetentionCutoffs c;
  c.history_before = now_;
  auto first = upkeep_->prune(c, 2);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->total(), 2u);
  auto left = s.list_audit(WallTime{}, 100);
  ASSERT_TRUE(left);
  ASSERT_EQ(left->size(), 3u);
  EXPECT_EQ(left->front().detail, "{\"n\":2}");
  auto rest = upkeep_->prune(c, 2);
  ASSERT_TRUE(rest);
  EXPECT_EQ(rest->total(), 2u);
  auto last = upkeep_->prune(c, 2);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->total(), 1u);
}

TEST_P(StoreRetentionTest, NoCutoffsPruneNothing) {
  StateStore& s = *store_;
  at(1000 * 24h, [&] {
    ASSERT_TRUE(s.record_reserved(std::nullopt, reservation(1, "a")));
    ASSERT_TRUE(s.mark_released(1, "gone"));
  });
  auto pruned = upkeep_->prune(RetentionCutoffs{}, 1000);
  ASSERT_TRUE(pruned);
  EXPECT_EQ(pruned->total(), 0u);
  EXPECT_TRUE(*s.find(1));
}

// ---------------------------------------------------------------- the SQLite store: space

// Writes `n` audit entries of about 1 KiB.
void fill_audit(Store& s, int n) {
  AuditEntry e;
  e.kind = "note";
  e.detail = "{\"pad\":\"" + std::string(1000, 'p') + "\"}";
  for (int i = 0; i < n; ++i) ASSERT_TRUE(s.audit(e));
}

std::uint64_t prune_all(Store& s, WallTime before) {
  RetentionCutoffs c;
  c.history_before = before;
  std::uint64_t total = 0;
  for (;;) {
    auto r = s.prune(c, 500);
    EXPECT_TRUE(r) << r.status().message();
    if (!r || r->total() == 0) return total;
    total += r->total();
  }
}

TEST_F(StoreTest, PrunedPagesGoBackToTheFileSystem) {
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->open_report().shrinks);
  fill_audit(*s, 3000);
  auto full = s->space();
  ASSERT_TRUE(full);
  EXPECT_GT(full->bytes, 3'000'000u);
  now_ += 1s;
  EXPECT_EQ(prune_all(*s, now_), 3000u);
  auto pruned = s->space();
  ASSERT_TRUE(pruned);
  EXPECT_EQ(pruned->bytes, full->bytes) << "pruning alone frees pages inside the file";
  EXPECT_GT(pruned->free_bytes, 3'000'000u);
  std::uint64_t given_back = 0;
  for (;;) {
    auto r = s->reclaim(1u << 20);
    ASSERT_TRUE(r) << r.status().message();
    given_back += *r;
    if (*r < (1u << 20)) break;
  }
  auto after = s->space();
  ASSERT_TRUE(after);
  EXPECT_EQ(after->bytes, full->bytes - given_back);
  EXPECT_LT(after->bytes, 200'000u);
  EXPECT_EQ(after->free_bytes, 0u);
  auto qc = s->quick_check();
  ASSERT_TRUE(qc);
  EXPECT_EQ(*qc, std::vector<std::string>{"ok"});
  s.reset();  // the last checkpoint cuts the file
  EXPECT_LT(fs::file_size(path_), 200'000u);
}

TEST_F(StoreTest, ADatabaseMadeBeforeIncrementalVacuumReusesPrunedPagesAndStopsGrowing) {
  { ASSERT_TRUE(open()); }
  raw_exec(path_, "PRAGMA auto_vacuum=NONE; VACUUM;");
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->open_report().shrinks);
  fill_audit(*s, 2000);
  auto first = s->space();
  ASSERT_TRUE(first);
  for (int round = 0; round < 3; ++round) {
    now_ += 1s;
    EXPECT_EQ(prune_all(*s, now_), 2000u);
    auto r = s->reclaim(1u << 30);
    ASSERT_TRUE(r);
    EXPECT_EQ(*r, 0u);
    fill_audit(*s, 2000);
  }
  auto last = s->space();
  ASSERT_TRUE(last);
  EXPECT_LE(last->bytes, first->bytes + 64 * 1024) << "the file grew although every round pruned what it wrote";
}

// ---------------------------------------------------------------- the SQLite store: its file

TEST_F(StoreTest, CheckFileFindsTheFileSoundWhileItIsTheOneOpened) {
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->check_file()) << s->check_file().message();
}

TEST_F(StoreTest, CheckFileNamesAFileReplacedWhileOpen) {
  auto s = open();
  ASSERT_TRUE(s);
  const std::string other = (fs::path(dir_) / "other.db").string();
  fs::copy_file(path_, other);
  fs::rename(other, path_);
  auto st = s->check_file();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.code(), basil::Code::kMalformed);
  EXPECT_NE(st.message().find("state database " + path_ + " was replaced while basild runs"), std::string::npos)
      << st.message();
}

TEST_F(StoreTest, CheckFileNamesAFileTruncatedWhileOpen) {
  auto s = open();
  ASSERT_TRUE(s);
  ASSERT_EQ(::truncate(path_.c_str(), 0), 0);
  auto st = s->check_file();
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("was truncated to 0 bytes while basild runs"), std::string::npos) << st.message();
}

TEST_F(StoreTest, CheckFileNamesAFileRemovedWhileOpen) {
  auto s = open();
  ASSERT_TRUE(s);
  fs::remove(path_);
  auto st = s->check_file();
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("was removed while basild runs"), std::string::npos) << st.message();
}

TEST_F(StoreTest, AnEmptyDatabaseFileIsRefusedUnlessAccepted) {
  { std::ofstream(path_, std::ios::binary); }
  ASSERT_EQ(fs::file_size(path_), 0u);
  auto refused = Store::open(path_, options());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().code(), basil::Code::kMalformed);
  EXPECT_NE(refused.status().message().find("exists but is empty (0 bytes)"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("--accept-empty-state"), std::string::npos);
  EXPECT_EQ(fs::file_size(path_), 0u) << "the refused file is left as it was";

  StoreOptions o = options();
  o.accept_empty = true;
  auto s = open(o);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->open_report().schema_from, 0);
}

TEST_F(StoreTest, AFileAnOpenCreatedAndCouldNotWriteIsRemoved) {
  StoreOptions o = options();
  o.fail_statement = [](std::string_view sql) {
    return sql.find("CREATE TABLE reservations") != std::string_view::npos;
  };
  auto failed = Store::open(path_, o);
  ASSERT_FALSE(failed);
  EXPECT_FALSE(fs::exists(path_)) << "an empty file would be refused at the next start";
  EXPECT_FALSE(fs::exists(path_ + "-wal"));
  EXPECT_TRUE(open());
}

TEST_F(StoreTest, ItsFilesAreCreated0640WhateverTheUmask) {
  const mode_t before = ::umask(0);
  auto s = Store::open(path_, options());
  ::umask(before);
  ASSERT_TRUE(s) << s.status().message();
  ASSERT_TRUE((*s)->record_intent("1", "alice", "p"));
  for (const char* suffix : {"", "-wal", "-shm", ".lock"}) {
    struct stat st {};
    ASSERT_EQ(::stat((path_ + suffix).c_str(), &st), 0) << suffix;
    EXPECT_EQ(st.st_mode & 0777, 0640u) << path_ << suffix;
  }
}

}  // namespace
}  // namespace basild
