// The emulator's SDB in a real MariaDB server (tests/support/mariadb_fixture.h,
// one server per test): loaded from each preset and asked the two queries a
// select/alps Slurm asks, node changes followed, failures reported. The
// client is Debian's `mariadb`, as `sdb load --client` would be on a site.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "emulator/core/sdb.h"
#include "emulator/core/state.h"
#include "emulator/core/system.h"
#include "tests/support/mariadb_fixture.h"
#include "tests/support/subprocess.h"

namespace emu {
namespace {

const std::string kBinary = BASIL_BINARY_DIR "/emulator/basil-emulator";

// Slurm's per-node query (basil_geometry) and its Gemini test (cray_is_gemini_system).
constexpr const char* kNodeQuery =
    "SELECT x_coord, y_coord, z_coord, processor_type FROM processor WHERE processor_id = ?";
constexpr const char* kGeminiQuery =
    "SELECT COUNT(DISTINCT x_coord, y_coord, z_coord) < COUNT(*) FROM processor "
    "WHERE x_coord IS NOT NULL AND y_coord IS NOT NULL AND z_coord IS NOT NULL";

struct NodeAnswer {
  std::string x, y, z, type;  // as the client prints them ("NULL" for NULL)
};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

class SdbMariaDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<basil_test::MariaDb>(BASIL_BINARY_DIR "/tests/servers");
    ASSERT_TRUE(server_->ok()) << server_->error();
  }
  void TearDown() override { server_.reset(); }

  basil_test::Ran emu(std::vector<std::string> args) {
    args.insert(args.begin(), kBinary);
    auto r = basil_test::run(args, "", {.err = basil_test::Redirect::pipe()}, std::chrono::seconds(120));
    EXPECT_TRUE(r.error.empty()) << r.error;
    return r;
  }
  // A new emulator state of `preset` beside the server's files.
  std::string init(const std::string& preset) {
    const std::string state = server_->dir() + "/state-" + preset;
    const basil_test::Ran r = emu({"init", "--preset", preset, "--state", state});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return state;
  }
  basil_test::Ran load(const std::string& state, const std::string& database, const std::string& cnf = {}) {
    return emu({"--state", state, "sdb", "load", "--defaults-file", cnf.empty() ? server_->defaults_file() : cnf,
                "--database", database, "--client", basil_test::MariaDb::kClient});
  }
  std::string query(const std::string& sql) {
    auto out = server_->query(sql);
    EXPECT_TRUE(out.is_ok()) << out.status().message();
    return out.is_ok() ? *out : std::string();
  }

  // Slurm's per-node query, prepared once and executed for each NID.
  std::map<std::uint32_t, NodeAnswer> ask_nodes(const std::string& database, const std::vector<std::uint32_t>& nids) {
    std::string sql = "USE " + sql_identifier(database) + ";\nPREPARE q FROM " + sql_string(kNodeQuery) + ";\n";
    for (std::uint32_t nid : nids)
      sql += "SET @nid = " + std::to_string(nid) + "; SELECT 'nid', @nid; EXECUTE q USING @nid;\n";
    std::map<std::uint32_t, NodeAnswer> out;
    std::uint32_t current = 0;
    for (const std::string& line : split(query(sql), '\n')) {
      const auto f = split(line, '\t');
      if (f.size() == 2 && f[0] == "nid") current = static_cast<std::uint32_t>(std::stoul(f[1]));
      else if (f.size() == 4) out[current] = NodeAnswer{f[0], f[1], f[2], f[3]};
      else ADD_FAILURE() << "unexpected line: " << line;
    }
    return out;
  }
  bool is_gemini(const std::string& database) {
    return query("USE " + sql_identifier(database) + ";\n" + kGeminiQuery + ";\n") == "1\n";
  }
  // processor_status and alloc_mode of one NID.
  std::string status_of(const std::string& database, std::uint32_t nid) {
    return query("SELECT processor_status, alloc_mode FROM " + sql_identifier(database) +
                 ".processor WHERE processor_id = " + std::to_string(nid));
  }

  // Each answer as the emulated system has it: a compute row with the
  // interconnect's coordinates for a node, a service row for a service NID,
  // none for any other NID.
  void check_answers(const System& system, const std::vector<ProcessorRow>& rows,
                     const std::map<std::uint32_t, NodeAnswer>& answers, const std::vector<std::uint32_t>& asked) {
    const Interconnect ic = interconnect_of(system);
    const State world = initial_state(system);
    std::set<std::uint32_t> service;
    for (const ProcessorRow& r : rows)
      if (r.service) service.insert(r.processor_id);
    for (std::uint32_t nid : asked) {
      const auto it = answers.find(nid);
      if (world.find_node(nid) == nullptr && service.count(nid) == 0) {
        EXPECT_EQ(it, answers.end()) << "NID " << nid << " is no node";
        continue;
      }
      ASSERT_NE(it, answers.end()) << "no row for NID " << nid;
      const Coordinates c = sdb_coordinates(system.geometry, ic, nid);
      EXPECT_EQ(it->second.type, service.count(nid) != 0 ? "service" : "compute") << "NID " << nid;
      EXPECT_EQ(it->second.x + "," + it->second.y + "," + it->second.z,
                std::to_string(c.x) + "," + std::to_string(c.y) + "," + std::to_string(c.z))
          << "NID " << nid;
    }
  }

  // What select/alps makes of the triples, from the answers alone: on
  // Gemini the two nodes of a chip (NIDs 2k, 2k+1) share one and the next
  // chip's differ; elsewhere no two nodes share one.
  void check_sharing(Interconnect ic, const std::map<std::uint32_t, NodeAnswer>& answers) {
    std::map<std::string, std::vector<std::uint32_t>> by_triple;
    for (const auto& [nid, a] : answers)
      if (a.type == "compute") by_triple[a.x + "," + a.y + "," + a.z].push_back(nid);
    for (const auto& [triple, nids] : by_triple) {
      if (ic != Interconnect::kGemini) {
        EXPECT_EQ(nids.size(), 1u) << triple << " shared by NIDs " << nids.front() << " and " << nids.back();
        continue;
      }
      ASSERT_EQ(nids.size(), 2u) << triple;
      EXPECT_EQ(nids[0] % 2, 0u) << triple;
      EXPECT_EQ(nids[1], nids[0] + 1) << triple;
    }
  }

  std::unique_ptr<basil_test::MariaDb> server_;
};

TEST_F(SdbMariaDbTest, EveryPresetAnswersSlurmsQueriesAsTheEmulatedSystemSays) {
  for (const std::string& name : preset_names()) {
    SCOPED_TRACE(name);
    std::string database = "sdb_" + name;
    std::replace(database.begin(), database.end(), '-', '_');
    const std::string state = init(name);
    const basil_test::Ran loaded = load(state, database);
    ASSERT_EQ(loaded.exit_code, 0) << loaded.err;
    const System system = *preset(name);
    const State world = initial_state(system);
    const auto rows = processor_rows(system, world.nodes);
    std::vector<std::uint32_t> asked;
    const std::uint32_t step = world.node_count() > 10000 ? 97 : 1;  // big-100k: about 1000 NIDs
    std::uint32_t i = 0;
    for (const ProcessorRow& r : rows)
      if (r.service || i++ % step == 0 || r.processor_id == rows.back().processor_id) asked.push_back(r.processor_id);
    asked.push_back(1);                              // in a service blade, no node
    asked.push_back(rows.back().processor_id + 1);  // past the last node
    const auto answers = ask_nodes(database, asked);
    check_answers(system, rows, answers, asked);
    if (step == 1) check_sharing(interconnect_of(system), answers);
    EXPECT_EQ(is_gemini(database), interconnect_of(system) == Interconnect::kGemini);
    EXPECT_EQ(query("SELECT COUNT(*) FROM " + database + ".processor WHERE processor_type = 'compute'"),
              std::to_string(world.node_count()) + "\n");
  }
  // A few positions worked out by hand (basil-emulator(1) states the rules).
  EXPECT_EQ(query("SELECT x_coord, y_coord, z_coord FROM sdb_xk7_gpu.processor WHERE processor_id IN (17, 18)"),
            "0\t0\t4\n0\t1\t4\n");
  EXPECT_EQ(query("SELECT x_coord, y_coord, z_coord FROM sdb_xt5_1844.processor WHERE processor_id = 455"),
            "1\t7\t17\n");
  EXPECT_EQ(query("SELECT x_coord, y_coord, z_coord FROM sdb_xc30_2256.processor WHERE processor_id = 1031"),
            "2\t19\t1\n");
  EXPECT_EQ(query("SELECT x_coord, y_coord, z_coord FROM sdb_big_100k.processor WHERE processor_id = 100023"),
            "130\t11\t13\n");
  EXPECT_TRUE(is_gemini("sdb_xk7_gpu"));
  EXPECT_FALSE(is_gemini("sdb_xt5_1844"));
  EXPECT_FALSE(is_gemini("sdb_xc30_2256"));
}

TEST_F(SdbMariaDbTest, ALoadReplacesTheTableBeforeItWhateverItsColumns) {
  query("CREATE DATABASE XTAdmin; CREATE TABLE XTAdmin.processor (processor_id INT PRIMARY KEY, x_coord INT);"
        "INSERT INTO XTAdmin.processor VALUES (99999, 1);");
  const std::string state = init("tds-8");
  for (int round = 0; round < 2; ++round) {
    const basil_test::Ran r = load(state, "XTAdmin");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(query("SELECT COUNT(*), MIN(processor_id), MAX(processor_id) FROM XTAdmin.processor"), "12\t0\t15\n");
    EXPECT_EQ(query("SHOW TABLES FROM XTAdmin"), "processor\n");
    EXPECT_EQ(query("SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY ORDINAL_POSITION) FROM information_schema.COLUMNS "
                    "WHERE TABLE_SCHEMA = 'XTAdmin' AND TABLE_NAME = 'processor'"),
              "processor_id,cab_position,cab_row,cage,slot,cpu,x_coord,y_coord,z_coord,processor_type,"
              "processor_status,alloc_mode\n");
  }
}

TEST_F(SdbMariaDbTest, NodeChangesReachTheLoadedSdbUntilItIsForgotten) {
  const std::string state = init("xc30-2256");
  ASSERT_EQ(load(state, "XTAdmin").exit_code, 0);
  const std::pair<const char*, const char*> states[] = {{"DOWN", "down"},       {"ADMIN", "admindown"},
                                                        {"ROUTING", "route"},   {"SUSPECT", "suspect"},
                                                        {"UNAVAILABLE", "unavail"}};
  std::uint32_t nid = 30;
  for (auto [alps, sdb] : states) {
    const basil_test::Ran r = emu({"--state", state, "node", "--nids", std::to_string(nid), "--set-state", alps});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(status_of("XTAdmin", nid++), std::string(sdb) + "\tbatch\n") << alps;
  }
  ASSERT_EQ(emu({"--state", state, "node", "--nids", "40", "--role", "INTERACTIVE"}).exit_code, 0);
  EXPECT_EQ(status_of("XTAdmin", 40), "up\tinteractive\n");
  ASSERT_EQ(emu({"--state", state, "node", "--nids", "30", "--set-state", "UP"}).exit_code, 0);
  EXPECT_EQ(status_of("XTAdmin", 30), "up\tbatch\n");
  ASSERT_EQ(emu({"--state", state, "sdb", "forget"}).exit_code, 0);
  ASSERT_EQ(emu({"--state", state, "node", "--nids", "50", "--set-state", "DOWN"}).exit_code, 0);
  EXPECT_EQ(status_of("XTAdmin", 50), "up\tbatch\n");
}

TEST_F(SdbMariaDbTest, AServerThatRefusesOrIsGoneLeavesTheNodeChangeAndFailsTheCommand) {
  const std::string state = init("xc30-2256");
  const std::string cnf = server_->dir() + "/site.cnf";
  auto write_cnf = [&](const char* password) {
    std::ofstream(cnf) << "[client]\nhost=127.0.0.1\nport=" << server_->port() << "\nuser="
                       << basil_test::MariaDb::kUser << "\npassword=" << password << "\n";
  };
  write_cnf("wrong");
  basil_test::Ran r = load(state, "XTAdmin", cnf);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Access denied"), std::string::npos) << r.err;
  write_cnf(basil_test::MariaDb::kPassword);
  ASSERT_EQ(load(state, "XTAdmin", cnf).exit_code, 0);

  write_cnf("wrong");
  r = emu({"--state", state, "node", "--nids", "30", "--set-state", "DOWN"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("Access denied"), std::string::npos) << r.err;
  EXPECT_EQ(status_of("XTAdmin", 30), "up\tbatch\n");
  write_cnf(basil_test::MariaDb::kPassword);
  ASSERT_EQ(emu({"--state", state, "sdb", "sync"}).exit_code, 0);
  EXPECT_EQ(status_of("XTAdmin", 30), "down\tbatch\n");

  server_->stop();
  r = emu({"--state", state, "node", "--nids", "31", "--set-state", "DOWN"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("Can't connect"), std::string::npos) << r.err;
  EXPECT_NE(emu({"--state", state, "show"}).out.find("nodes 30-31 xc30 BATCH DOWN"), std::string::npos);
}

}  // namespace
}  // namespace emu
