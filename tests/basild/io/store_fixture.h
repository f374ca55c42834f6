// The state store tests' fixture: a temporary directory with the SQLite
// store's file in it, a clock the test sets, a reservation to record, the
// contract's fixture that makes either StateStore ("Sqlite" or "Memory"),
// and the database read and written behind the store's back.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "basild/io/store.h"
#include "tests/support/memory_store.h"

namespace basild::store_testing {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "basild-store-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = (fs::path(dir_) / "state.db").string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  StoreOptions options() {
    StoreOptions o;
    o.clock = [this] { return now_; };
    return o;
  }
  std::unique_ptr<Store> open(StoreOptions o) {
    auto s = Store::open(path_, std::move(o));
    EXPECT_TRUE(s) << s.status().message();
    return s ? std::move(*s) : nullptr;
  }
  std::unique_ptr<Store> open() { return open(options()); }

  static ReservationRecord reservation(std::uint64_t id, const std::string& batch) {
    ReservationRecord r;
    r.res_id = id;
    r.batch_id = batch;
    r.user = "alice";
    r.account = "proj1";
    r.nodes = *basil::NidList::parse("24-27,40");
    r.width = 160;
    r.depth = 1;
    r.nppn = 32;
    r.nppcu = 1;
    return r;
  }

  std::string dir_;
  std::string path_;
  WallTime now_ = WallTime(std::chrono::milliseconds(1'700'000'000'000));
};

// The contract, once for each StateStore: "Sqlite" and "Memory".
class StoreContractTest : public StoreTest, public ::testing::WithParamInterface<std::string> {
 protected:
  std::unique_ptr<StateStore> make_store() {
    if (GetParam() == "Memory") return std::make_unique<basild_test::MemoryStore>([this] { return now_; });
    return open();
  }
};

// Every row of every table, as text: "unchanged" means this is equal.
inline std::string dump(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::string out;
  for (const char* table : {"schema_version", "reservations", "intents", "jobs", "audit", "node_events", "timings",
                            "quarantine"}) {
    out += std::string("## ") + table + "\n";
    std::string q = std::string("SELECT * FROM ") + table + " ORDER BY 1, 2";
    sqlite3_exec(
        db, q.c_str(),
        [](void* arg, int n, char** values, char**) {
          auto* s = static_cast<std::string*>(arg);
          for (int i = 0; i < n; ++i) *s += (values[i] ? values[i] : "NULL") + std::string("|");
          *s += "\n";
          return 0;
        },
        &out, nullptr);
  }
  sqlite3_close(db);
  return out;
}

inline void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

}  // namespace basild::store_testing
