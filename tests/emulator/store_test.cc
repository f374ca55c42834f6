// The emulator's store on real SQLite files, and when it asks the kernel to
// put them on disk. A VFS that wraps SQLite's default one counts every sync
// SQLite asks for (the unix VFS syncs the directory inside the same call).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "emulator/core/state.h"
#include "emulator/core/system.h"
#include "emulator/store/store.h"
#include "tests/support/temp_dir.h"

namespace emu {
namespace {

using basil::Status;

// ---------------------------------------------------------------- counting VFS

std::atomic<int> g_syncs{0};
sqlite3_vfs* g_base = nullptr;

struct CountingFile {
  sqlite3_file base;
  sqlite3_file* real;  // the default VFS's file, right after this struct
};

sqlite3_file* real(sqlite3_file* f) { return reinterpret_cast<CountingFile*>(f)->real; }

int c_close(sqlite3_file* f) { return real(f)->pMethods->xClose(real(f)); }
int c_read(sqlite3_file* f, void* p, int n, sqlite3_int64 o) { return real(f)->pMethods->xRead(real(f), p, n, o); }
int c_write(sqlite3_file* f, const void* p, int n, sqlite3_int64 o) {
  return real(f)->pMethods->xWrite(real(f), p, n, o);
}
int c_truncate(sqlite3_file* f, sqlite3_int64 n) { return real(f)->pMethods->xTruncate(real(f), n); }
int c_sync(sqlite3_file* f, int flags) {
  ++g_syncs;
  return real(f)->pMethods->xSync(real(f), flags);
}
int c_size(sqlite3_file* f, sqlite3_int64* n) { return real(f)->pMethods->xFileSize(real(f), n); }
int c_lock(sqlite3_file* f, int l) { return real(f)->pMethods->xLock(real(f), l); }
int c_unlock(sqlite3_file* f, int l) { return real(f)->pMethods->xUnlock(real(f), l); }
int c_reserved(sqlite3_file* f, int* out) { return real(f)->pMethods->xCheckReservedLock(real(f), out); }
int c_control(sqlite3_file* f, int op, void* arg) { return real(f)->pMethods->xFileControl(real(f), op, arg); }
int c_sector(sqlite3_file* f) { return real(f)->pMethods->xSectorSize(real(f)); }
int c_device(sqlite3_file* f) { return real(f)->pMethods->xDeviceCharacteristics(real(f)); }
int c_shm_map(sqlite3_file* f, int i, int n, int extend, void volatile** p) {
  return real(f)->pMethods->xShmMap(real(f), i, n, extend, p);
}
int c_shm_lock(sqlite3_file* f, int offset, int n, int flags) {
  return real(f)->pMethods->xShmLock(real(f), offset, n, flags);
}
void c_shm_barrier(sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); }
int c_shm_unmap(sqlite3_file* f, int del) { return real(f)->pMethods->xShmUnmap(real(f), del); }
int c_fetch(sqlite3_file* f, sqlite3_int64 o, int n, void** p) { return real(f)->pMethods->xFetch(real(f), o, n, p); }
int c_unfetch(sqlite3_file* f, sqlite3_int64 o, void* p) { return real(f)->pMethods->xUnfetch(real(f), o, p); }

const sqlite3_io_methods kCountingMethods = {
    3,        c_close,   c_read,    c_write,     c_truncate,   c_sync,        c_size,
    c_lock,   c_unlock,  c_reserved, c_control,  c_sector,     c_device,      c_shm_map,
    c_shm_lock, c_shm_barrier, c_shm_unmap, c_fetch, c_unfetch,
};

int c_open(sqlite3_vfs* /*vfs*/, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  auto* file = reinterpret_cast<CountingFile*>(f);
  file->real = reinterpret_cast<sqlite3_file*>(file + 1);
  const int rc = g_base->xOpen(g_base, name, file->real, flags, out_flags);
  file->base.pMethods = file->real->pMethods != nullptr ? &kCountingMethods : nullptr;
  return rc;
}

sqlite3_vfs g_counting{};

class StoreSyncTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_base = sqlite3_vfs_find(nullptr);
    ASSERT_NE(g_base, nullptr);
    ASSERT_EQ(g_base->iVersion >= 3, true);
    g_counting = *g_base;
    g_counting.zName = "basil-counting";
    g_counting.szOsFile = static_cast<int>(sizeof(CountingFile)) + g_base->szOsFile;
    g_counting.xOpen = c_open;
    g_counting.pNext = nullptr;
    ASSERT_EQ(sqlite3_vfs_register(&g_counting, 1), SQLITE_OK);
  }
  static void TearDownTestSuite() { sqlite3_vfs_unregister(&g_counting); }

  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    dir_ = tmp_.path();
  }

  void init(bool fsync) {
    auto sys = preset("tds-8");
    ASSERT_TRUE(sys.is_ok());
    sys->fsync = fsync;
    auto store = Store::create(dir_, initial_state(*sys));
    ASSERT_TRUE(store.is_ok()) << store.status().message();
  }

  struct Syncs {
    int at_commit = -1;  // from opening the store to the end of the transaction
    int in_all = -1;     // and its close
  };

  // Syncs asked for by one write (the request sequence goes up by one), from
  // opening the store to closing it, as one apbasil process does.
  Syncs syncs_of_one_write() {
    Syncs out;
    g_syncs = 0;
    auto store = Store::open(dir_);
    EXPECT_TRUE(store.is_ok()) << store.status().message();
    if (!store.is_ok()) return out;
    const Status st = (*store)->transact([](const State& s) -> basil::Result<Delta> {
      Delta d;
      d.counters = s.counters;
      ++d.counters->request_seq;
      return d;
    });
    EXPECT_TRUE(st.is_ok()) << st.message();
    out.at_commit = g_syncs.load();
    store->reset();
    out.in_all = g_syncs.load();
    return out;
  }

  std::uint64_t request_seq() {
    auto store = Store::open(dir_);
    EXPECT_TRUE(store.is_ok());
    auto s = (*store)->load();
    EXPECT_TRUE(s.is_ok());
    return s.is_ok() ? s->counters.request_seq : 0;
  }

  basil_test::TempDir tmp_{"emu-store"};
  std::string dir_;
};

TEST_F(StoreSyncTest, WithFsyncOffAWriteSyncsNothingAndIsStillThereForTheNextProcess) {
  init(false);
  const std::uint64_t before = request_seq();
  EXPECT_EQ(syncs_of_one_write().in_all, 0);
  EXPECT_EQ(request_seq(), before + 1);
}

TEST_F(StoreSyncTest, WithFsyncOnAWriteIsSyncedAtItsCommitAndAgainWhenCheckpointed) {
  init(true);
  const std::uint64_t before = request_seq();
  const Syncs s = syncs_of_one_write();
  // The WAL at the commit; at the close the WAL before it is copied into the
  // database, then the database.
  EXPECT_GE(s.at_commit, 1);
  EXPECT_GE(s.in_all, s.at_commit + 2);
  EXPECT_EQ(request_seq(), before + 1);
}

TEST_F(StoreSyncTest, WithFsyncOnAWriteIsSyncedEvenWhileAnotherProcessKeepsTheWalOpen) {
  init(true);
  // Another connection (another emulator process) is open, so the writer's
  // close is not the last and copies nothing into the database.
  auto reader = Store::open(dir_);
  ASSERT_TRUE(reader.is_ok());
  ASSERT_TRUE((*reader)->read([](const State&) {}).is_ok());
  EXPECT_GE(syncs_of_one_write().at_commit, 1);
}

TEST_F(StoreSyncTest, TheCheckFindsTheFsyncCopiesInAgreement) {
  for (bool fsync : {false, true}) {
    SCOPED_TRACE(fsync);
    init(fsync);
    auto store = Store::open(dir_);
    ASSERT_TRUE(store.is_ok());
    auto problems = (*store)->check();
    ASSERT_TRUE(problems.is_ok()) << problems.status().message();
    EXPECT_TRUE(problems->empty()) << problems->front();
    store->reset();
    std::filesystem::remove_all(dir_);
  }
}

TEST_F(StoreSyncTest, AReadSyncsNothingWhateverTheSetting) {
  init(true);
  g_syncs = 0;
  {
    auto store = Store::open(dir_);
    ASSERT_TRUE(store.is_ok());
    ASSERT_TRUE((*store)->read([](const State&) {}).is_ok());
  }
  EXPECT_EQ(g_syncs.load(), 0);
}

TEST_F(StoreSyncTest, SwitchingFsyncOnSyncsThatChangeAndEveryWriteAfterIt) {
  init(false);
  EXPECT_EQ(syncs_of_one_write().in_all, 0);
  g_syncs = 0;
  {
    auto store = Store::open(dir_);
    ASSERT_TRUE(store.is_ok());
    ASSERT_TRUE((*store)->transact([](const State& s) -> basil::Result<Delta> {
      Delta d;
      d.system = s.system;
      d.system->fsync = true;
      return d;
    }).is_ok());
  }
  EXPECT_GE(g_syncs.load(), 2);
  EXPECT_GE(syncs_of_one_write().at_commit, 1);
}

// ---------------------------------------------------------------- settings

class StoreSettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.empty());
    auto sys = preset("tds-8");
    ASSERT_TRUE(sys.is_ok());
    ASSERT_TRUE(Store::create(dir_, initial_state(*sys)).is_ok());
  }
  basil_test::TempDir tmp_{"emu-settings"};
  std::string dir_ = tmp_.path();
};

TEST_F(StoreSettingsTest, ASettingOutlivesTheProcessAndErasingRemovesIt) {
  {
    auto store = Store::open(dir_);
    ASSERT_TRUE(store.is_ok());
    auto none = (*store)->setting("sdb");
    ASSERT_TRUE(none.is_ok()) << none.status().message();
    EXPECT_FALSE(none->has_value());
    ASSERT_TRUE((*store)->put_setting("sdb", std::string("{\"a\":1}")).is_ok());
    ASSERT_TRUE((*store)->put_setting("sdb", std::string("{\"a\":2}")).is_ok());
  }
  auto store = Store::open(dir_);
  ASSERT_TRUE(store.is_ok());
  auto v = (*store)->setting("sdb");
  ASSERT_TRUE(v.is_ok());
  EXPECT_EQ(v->value_or(""), "{\"a\":2}");
  ASSERT_TRUE((*store)->put_setting("sdb", std::nullopt).is_ok());
  EXPECT_FALSE((*store)->setting("sdb")->has_value());
}

TEST_F(StoreSettingsTest, SettingsLeaveTheWorldAndItsCheckAlone) {
  auto store = Store::open(dir_);
  ASSERT_TRUE(store.is_ok());
  auto before = (*store)->load();
  ASSERT_TRUE(before.is_ok());
  ASSERT_TRUE((*store)->put_setting("sdb", std::string("x")).is_ok());
  auto after = (*store)->load();
  ASSERT_TRUE(after.is_ok());
  EXPECT_EQ(after->nodes.size(), before->nodes.size());
  EXPECT_EQ(after->counters, before->counters);
  auto problems = (*store)->check();
  ASSERT_TRUE(problems.is_ok());
  EXPECT_TRUE(problems->empty());
}

TEST_F(StoreSettingsTest, TheWorldsOwnKeysAreNoSettings) {
  auto store = Store::open(dir_);
  ASSERT_TRUE(store.is_ok());
  EXPECT_FALSE((*store)->put_setting("system", std::string("{}")).is_ok());
  EXPECT_FALSE((*store)->put_setting("faults", std::nullopt).is_ok());
  EXPECT_FALSE((*store)->setting("system").is_ok());
  EXPECT_TRUE((*store)->load().is_ok());
}

// A state made before SWITCH took time (schema 1: no switch_done_ms) is
// brought to schema 2 as it is first read, its reservations kept, settled.
TEST(StoreMigrationTest, AStateOfSchemaOneIsReadWithItsReservationsAndWrittenAsSchemaTwo) {
  basil_test::TempDir tmp("emu-migrate");
  const std::string dir = tmp.path() + "/state";
  auto sys = preset("tds-8");
  ASSERT_TRUE(sys.is_ok());
  State world = initial_state(*sys);
  {
    auto store = Store::create(dir, world);
    ASSERT_TRUE(store.is_ok()) << store.status().message();
    ASSERT_TRUE((*store)->transact([](const State&) -> basil::Result<Delta> {
                  Delta d;
                  ReservationRec r;
                  r.reservation_id = 7;
                  r.user_name = "alice";
                  r.batch_id = "42";
                  r.suspended = true;
                  r.switch_done_ms = 123;
                  d.put_reservations.push_back(r);
                  return d;
                }).is_ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(Store::db_path(dir).c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "ALTER TABLE reservation DROP COLUMN switch_done_ms;"
                         "UPDATE schema_version SET version = 1",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);

  auto store = Store::open(dir);
  ASSERT_TRUE(store.is_ok());
  auto loaded = (*store)->load();
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  ASSERT_EQ(loaded->reservations.count(7), 1u);
  EXPECT_TRUE(loaded->reservations.at(7).suspended);
  EXPECT_EQ(loaded->reservations.at(7).switch_done_ms, 0u) << "settled";
  store->reset();
  ASSERT_EQ(sqlite3_open(Store::db_path(dir).c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT version FROM schema_version", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 2);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

}  // namespace
}  // namespace emu
