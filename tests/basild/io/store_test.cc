// The SQLite state store's own: schema and reopening, the one-basild-per-database lock (with a
// second real process), disk full, fail-the-Nth-statement atomicity, kill -9 durability and
// damaged files. The contract it shares with the in-memory store is in store_contract_test.cc.
#include "basild/io/store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/basild/io/store_fixture.h"

namespace basild {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace store_testing;

// ---------------------------------------------------------------- the SQLite store: schema and files

TEST_F(StoreTest, CreatesTheSchemaAndReopensWithoutMigrating) {
  {
    auto s = open();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->open_report().schema_from, 0);
    EXPECT_EQ(s->open_report().schema_to, Store::schema_version_latest());
    auto qc = s->quick_check();
    ASSERT_TRUE(qc);
    EXPECT_EQ(*qc, std::vector<std::string>{"ok"});
  }
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->open_report().schema_from, Store::schema_version_latest());
  EXPECT_EQ(s->open_report().quarantined, 0u);
  // WAL, as the state of a killed process must survive.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// ---------------------------------------------------------------- one basild per database

TEST_F(StoreTest, SecondStoreOnTheSameDatabaseIsRefused) {
  auto first = open();
  ASSERT_TRUE(first);
  auto second = Store::open(path_, options());
  ASSERT_FALSE(second);
  EXPECT_EQ(second.status().code(), basil::Code::kBusy);
  EXPECT_NE(second.status().message().find("in use by another basild (pid " + std::to_string(::getpid())),
            std::string::npos)
      << second.status().message();
  first.reset();
  EXPECT_TRUE(Store::open(path_, options()));
}

TEST_F(StoreTest, SecondProcessIsRefusedWithTheHoldersPid) {
  int ready[2], release[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(release), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto s = Store::open(path_);
    const char ok = s ? 'y' : 'n';
    (void)!::write(ready[1], &ok, 1);
    char c = 0;
    (void)!::read(release[0], &c, 1);
    ::_exit(s ? 0 : 1);
  }
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, 'y');

  auto mine = Store::open(path_, options());
  ASSERT_FALSE(mine);
  EXPECT_EQ(mine.status().code(), basil::Code::kBusy);
  EXPECT_TRUE(mine.status().transient());
  const std::string& msg = mine.status().message();
  EXPECT_NE(msg.find("in use by another basild (pid " + std::to_string(child) + ", lock " + path_ + ".lock)"),
            std::string::npos)
      << msg;

  ASSERT_EQ(::write(release[1], "x", 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (int fd : {ready[0], ready[1], release[0], release[1]}) ::close(fd);
  // The holder is gone, and its lock with it.
  auto now_mine = Store::open(path_, options());
  EXPECT_TRUE(now_mine) << now_mine.status().message();
}

// A basild killed -9 while it was starting a program: the lock's descriptor
// lives on in that child until its exec (here: until the test lets it go).
// The next basild waits for it, and names the gone holder when it does not
// come free.
class OrphanLock {
 public:
  // A "basild" (a child) takes the store and forks a grandchild that keeps
  // the lock's descriptor, then dies.
  explicit OrphanLock(const std::string& path) {
    EXPECT_EQ(::pipe(held_), 0);
    EXPECT_EQ(::pipe(release_), 0);
    basild_ = ::fork();
    if (basild_ == 0) {
      auto s = Store::open(path);
      if (!s) ::_exit(1);
      if (::fork() == 0) {
        ::close(release_[1]);
        (void)!::write(held_[1], "y", 1);
        char c = 0;
        (void)!::read(release_[0], &c, 1);  // until released (end of file)
        ::_exit(0);
      }
      ::_exit(0);  // no destructor: the lock's descriptor is the grandchild's now
    }
    ::close(held_[1]);
    int st = 0;
    EXPECT_EQ(::waitpid(basild_, &st, 0), basild_);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char c = 0;
    EXPECT_EQ(::read(held_[0], &c, 1), 1);
  }
  ~OrphanLock() {
    release();
    for (int fd : {held_[0], release_[0]}) ::close(fd);
  }
  OrphanLock(const OrphanLock&) = delete;
  OrphanLock& operator=(const OrphanLock&) = delete;
  pid_t basild() const { return basild_; }
  void release() {
    if (release_[1] < 0) return;
    ::close(release_[1]);
    release_[1] = -1;
  }

 private:
  int held_[2] = {-1, -1}, release_[2] = {-1, -1};
  pid_t basild_ = -1;
};

TEST_F(StoreTest, ALockHeldByTheChildOfAKilledBasildIsWaitedFor) {
  OrphanLock orphan(path_);
  // Let go a little later, while open() waits (on a basild that waits): the
  // outcome does not depend on when; only a basild that does not wait fails.
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    orphan.release();
  });
  auto o = options();
  o.lock_wait = std::chrono::seconds(30);
  auto s = Store::open(path_, o);
  releaser.join();
  EXPECT_TRUE(s) << s.status().message();
}

TEST_F(StoreTest, ALockHeldByTheChildOfAKilledBasildThatStaysIsRefusedNamingTheGoneHolder) {
  OrphanLock orphan(path_);
  auto o = options();
  o.lock_wait = std::chrono::milliseconds(200);
  auto s = Store::open(path_, o);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.status().code(), basil::Code::kBusy);
  EXPECT_NE(s.status().message().find("(pid " + std::to_string(orphan.basild()) + ", gone)"), std::string::npos)
      << s.status().message();
}

// ---------------------------------------------------------------- failures

TEST_F(StoreTest, DiskFullIsADistinctErrorAndLosesNothingCommitted) {
  StoreOptions o = options();
  o.max_page_count = 40;
  auto s = open(std::move(o));
  ASSERT_TRUE(s);
  AuditEntry big;
  big.kind = "note";
  big.detail = "{\"pad\":\"" + std::string(3000, 'x') + "\"}";
  int written = 0;
  basil::Status st;
  for (; written < 1000; ++written) {
    st = s->audit(big);
    if (!st) break;
  }
  ASSERT_FALSE(st) << "never became full";
  EXPECT_GT(written, 0);
  EXPECT_EQ(st.code(), basil::Code::kLimitExceeded);
  EXPECT_NE(st.message().find("state database " + path_ + " is full"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("audit was not written"), std::string::npos) << st.message();

  auto entries = s->list_audit(WallTime{}, 10000);
  ASSERT_TRUE(entries);
  EXPECT_EQ(entries->size(), static_cast<std::size_t>(written));
  // The file is sound and the store goes on reading.
  auto qc = s->quick_check();
  ASSERT_TRUE(qc);
  EXPECT_EQ(*qc, std::vector<std::string>{"ok"});
}

// Runs `op` failing its Nth statement, for N = 1, 2, ... until it succeeds
// untouched: every failed attempt must leave the database exactly as it was.
void expect_atomic(const char* name, const std::function<void(Store&)>& seed,
                   const std::function<basil::Status(Store&)>& op,
                   const std::function<std::unique_ptr<Store>(StoreOptions)>& open_at,
                   const std::function<StoreOptions()>& base_options) {
  for (int n = 1; n < 200; ++n) {
    auto armed = std::make_shared<bool>(false);
    auto count = std::make_shared<int>(0);
    StoreOptions o = base_options();
    o.fail_statement = [armed, count, n](std::string_view) { return *armed && ++*count == n; };
    auto s = open_at(o);
    ASSERT_TRUE(s) << name;
    seed(*s);
    const std::string before = dump(s->path());
    *armed = true;
    basil::Status st = op(*s);
    *armed = false;
    if (*count < n) {
      ASSERT_TRUE(st) << name << ": " << st.message();
      ASSERT_GT(n, 1) << name << " ran no statement";
      return;
    }
    ASSERT_FALSE(st) << name << ": statement " << n << " failed but the operation succeeded";
    EXPECT_NE(st.message().find("injected failure"), std::string::npos) << st.message();
    EXPECT_EQ(dump(s->path()), before) << name << ": failing statement " << n << " left a change";
    // The store is still usable: the same operation now succeeds.
    EXPECT_TRUE(op(*s)) << name << " after an injected failure at " << n;
  }
  FAIL() << name << " never completed";
}

TEST_F(StoreTest, FailingAnyStatementLeavesTheDatabaseUnchanged) {
  int round = 0;
  auto open_at = [&](StoreOptions o) {
    path_ = (fs::path(dir_) / ("fail" + std::to_string(++round) + ".db")).string();
    return open(std::move(o));
  };
  auto base = [&] { return options(); };
  auto seed = [](Store& s) {
    auto i = s.record_intent("1", "alice", "p");
    ASSERT_TRUE(i);
    ASSERT_TRUE(s.record_intent("2", "bob", "p"));
    ASSERT_TRUE(s.record_reserved(*i, reservation(10, "1")));
    ASSERT_TRUE(s.record_seen(reservation(11, "x")));
    ASSERT_TRUE(s.sync_jobs("squeue", {"1", "2"}));
  };
  struct Op {
    const char* name;
    std::function<basil::Status(Store&)> run;
  };
  const std::vector<Op> ops = {
      {"record_intent", [](Store& s) { return s.record_intent("3", "carol", "p").status(); }},
      {"record_reserved", [](Store& s) { return s.record_reserved(2, reservation(12, "2")); }},
      {"settle_intent_adopted", [](Store& s) { return s.settle_intent_adopted(2, reservation(11, "2"), "seen"); }},
      {"settle_intent_dropped", [](Store& s) { return s.settle_intent_dropped(2, "none"); }},
      {"mark_confirmed", [](Store& s) { return s.mark_confirmed(10, 99); }},
      {"mark_released", [](Store& s) { return s.mark_released(10, "gone"); }},
      {"record_seen", [](Store& s) { return s.record_seen(reservation(13, "y")); }},
      {"touch_seen", [](Store& s) { return s.touch_seen({10, 11}); }},
      {"sync_jobs", [](Store& s) { return s.sync_jobs("squeue", {"2", "3", "4"}); }},
      {"record_node_events",
       [](Store& s) { return s.record_node_events({{0, {}, 1, "state", "UP", "DOWN", ""}, {0, {}, 2, "state", "UP", "DOWN", ""}}); }},
      {"save_timings", [](Store& s) { return s.save_timings({{"A", "{}"}, {"B", "{}"}}); }},
  };
  for (const auto& op : ops) {
    now_ += 1s;  // each operation writes times that differ from the seed's
    expect_atomic(op.name, seed, op.run, open_at, base);
  }
}

TEST_F(StoreTest, CommittedIntentSurvivesKillNine) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto s = Store::open(path_);
    if (!s) ::_exit(2);
    for (int i = 0; i < 20; ++i) {
      if (!(*s)->record_intent(std::to_string(1000 + i), "alice", "<params/>")) ::_exit(3);
    }
    ReservationRecord r = reservation(500, "1000");
    if (!(*s)->record_reserved(1, r)) ::_exit(4);
    ::raise(SIGKILL);  // no destructor, no checkpoint, no close
    ::_exit(5);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->open_report().pending_intents, 19);
  auto pending = s->list_pending_intents();
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 19u);
  EXPECT_EQ(pending->back().batch_id, "1019");
  auto r = s->find(500);
  ASSERT_TRUE(r && r->has_value());
  EXPECT_EQ((*r)->intent_id, 1);
}

TEST_F(StoreTest, FileThatIsNotADatabaseIsRefusedClearly) {
  {
    std::ofstream f(path_, std::ios::binary);
    f << std::string(8192, 'G');
  }
  auto s = Store::open(path_, options());
  ASSERT_FALSE(s);
  EXPECT_EQ(s.status().code(), basil::Code::kMalformed);
  EXPECT_NE(s.status().message().find("state database " + path_ + " is damaged"), std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find("move it aside"), std::string::npos);
}

TEST_F(StoreTest, CorruptedPagesFailTheQuickCheckOnOpen) {
  {
    auto s = open();
    ASSERT_TRUE(s);
    AuditEntry e;
    e.kind = "note";
    e.detail = "{\"pad\":\"" + std::string(300, 'p') + "\"}";
    for (int i = 0; i < 400; ++i) ASSERT_TRUE(s->audit(e));
  }  // closed: checkpointed, no -wal left
  ASSERT_FALSE(fs::exists(path_ + "-wal") && fs::file_size(path_ + "-wal") > 0);
  const std::string copy = (fs::path(dir_) / "copy.db").string();
  fs::copy_file(path_, copy);
  const auto size = fs::file_size(copy);
  ASSERT_GT(size, 20u * 4096u);
  {
    // Garbage over pages 6..10, away from the header and the schema.
    std::fstream f(copy, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(5 * 4096);
    std::string garbage;
    for (int i = 0; i < 5 * 4096; ++i) garbage += static_cast<char>((i * 7919 + 13) & 0xff);
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  auto s = Store::open(copy, options());
  ASSERT_FALSE(s);
  EXPECT_EQ(s.status().code(), basil::Code::kMalformed);
  const std::string& msg = s.status().message();
  EXPECT_TRUE(msg.find("failed its integrity check") != std::string::npos ||
              msg.find("is damaged") != std::string::npos)
      << msg;
  EXPECT_NE(msg.find("move it aside and restart basild"), std::string::npos) << msg;
  // The original is untouched and still opens.
  EXPECT_TRUE(Store::open(path_, options()));
}

TEST_F(StoreTest, QuickCheckProblemsAreNamedInTheError) {
  {
    auto s = open();
    ASSERT_TRUE(s);
    AuditEntry e;
    e.kind = "note";
    ASSERT_TRUE(s->audit(e));
  }
  // A NULL where the schema says NOT NULL: the b-trees are sound, the rows are not.
  raw_exec(path_, "PRAGMA writable_schema=ON;"
                  "UPDATE sqlite_schema SET sql = replace(sql, 'kind      TEXT    NOT NULL', 'kind TEXT')"
                  " WHERE name = 'audit';");
  raw_exec(path_, "UPDATE audit SET kind = NULL;");
  raw_exec(path_, "PRAGMA writable_schema=ON;"
                  "UPDATE sqlite_schema SET sql = replace(sql, 'kind TEXT', 'kind      TEXT    NOT NULL')"
                  " WHERE name = 'audit';");
  auto s = Store::open(path_, options());
  ASSERT_FALSE(s);
  EXPECT_EQ(s.status().code(), basil::Code::kMalformed);
  EXPECT_NE(s.status().message().find("failed its integrity check (PRAGMA quick_check: NULL value in audit.kind"),
            std::string::npos)
      << s.status().message();
}

TEST_F(StoreTest, BadRowsAreMovedAsideNotFatal) {
  {
    auto s = open();
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->record_reserved(std::nullopt, reservation(1, "a")));
    ASSERT_TRUE(s->record_reserved(std::nullopt, reservation(2, "b")));
    ASSERT_TRUE(s->record_intent("c", "carol", "p"));
  }
  raw_exec(path_, "UPDATE reservations SET nodes = '5-1' WHERE res_id = 2;"
                  "UPDATE intents SET state = 'limbo';");
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->open_report().quarantined, 2u);
  ASSERT_EQ(s->open_report().notes.size(), 2u);
  EXPECT_NE(s->open_report().notes[0].find("reservations"), std::string::npos) << s->open_report().notes[0];
  auto active = s->list_active();
  ASSERT_TRUE(active) << active.status().message();
  ASSERT_EQ(active->size(), 1u);
  EXPECT_EQ((*active)[0].res_id, 1u);
  EXPECT_TRUE(s->list_pending_intents()->empty());
  EXPECT_NE(dump(path_).find("unknown intent state \"limbo\""), std::string::npos);
}

TEST_F(StoreTest, DatabaseFromANewerBasildIsRefused) {
  { ASSERT_TRUE(open()); }
  raw_exec(path_, "INSERT INTO schema_version (version, applied_ms) VALUES (99, 0)");
  auto s = Store::open(path_, options());
  ASSERT_FALSE(s);
  EXPECT_EQ(s.status().code(), basil::Code::kMalformed);
  EXPECT_NE(s.status().message().find("schema version 99, written by a newer basild"), std::string::npos)
      << s.status().message();
}

TEST_F(StoreTest, MissingDirectoryIsAClearError) {
  auto s = Store::open(dir_ + "/no/such/dir/state.db", options());
  ASSERT_FALSE(s);
  EXPECT_NE(s.status().message().find("lock file"), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace basild
