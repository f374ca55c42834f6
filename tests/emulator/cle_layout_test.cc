// The emulator writes the INVENTORY layout of the engine it advertises, for
// every CLE release it offers: a client negotiates as Slurm's select/alps
// does (QUERY ENGINE at 1.0, the highest protocol both speak) and checks
// every element's depth against the table of that engine's parser variant
// (0 = BasilResponse). CLE 5.2 before UP03 (engine 5.2.0) puts MemoryArray
// directly under Node (depth 5); its client stops on one at depth 9. The two
// 1.3 layouts are also compared with golden files.
#include <gtest/gtest.h>
#include <libxml/xmlreader.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "basil_proto/codec.h"
#include "basil_proto/dialect.h"
#include "tests/emulator/emulator_fixture.h"

namespace {

using namespace emulator_testing;

using Depths = std::map<std::string, int>;

// Slurm's per-variant depths, written from its tables (not from the codec).
Depths expected_depths(const std::string& cle) {
  Depths d{{"BasilResponse", 0}, {"ResponseData", 1}, {"Inventory", 2}, {"NodeArray", 3}, {"Node", 4},
           {"ReservationArray", 3}, {"Reservation", 4}};
  if (cle == "5.1" || cle == "5.2" || cle == "5.2.0") {
    d.insert({{"SocketArray", 5}, {"Socket", 6}, {"SegmentArray", 7}, {"Segment", 8}, {"ComputeUnitArray", 9},
              {"ComputeUnit", 10}, {"ProcessorArray", 11}, {"Processor", 12}, {"ProcessorAllocation", 13},
              {"LabelArray", 9}, {"Label", 10}});
    const int mem = cle == "5.2.0" ? 5 : 9;  // 5.2 before UP03: MemoryArray under Node
    d.insert({{"MemoryArray", mem}, {"Memory", mem + 1}, {"MemoryAllocation", mem + 2}});
  } else {  // protocol 1.1 (CLE 2.x, 3.x) and 1.2 (CLE 4.x, 5.0)
    d.insert({{"SegmentArray", 5}, {"Segment", 6}, {"ProcessorArray", 7}, {"Processor", 8},
              {"ProcessorAllocation", 9}, {"MemoryArray", 7}, {"Memory", 8}, {"MemoryAllocation", 9},
              {"LabelArray", 7}, {"Label", 8}});
  }
  // Every CLE negotiates 1.1 or later, where reservations carry applications.
  d.insert({{"ApplicationArray", 5}, {"Application", 6}, {"CommandArray", 7}, {"Command", 8}});
  return d;
}

// Every element name with the set of depths it occurs at.
std::map<std::string, std::set<int>> depths_in(const std::string& xml) {
  std::map<std::string, std::set<int>> out;
  std::unique_ptr<xmlTextReader, void (*)(xmlTextReaderPtr)> r(
      xmlReaderForMemory(xml.data(), static_cast<int>(xml.size()), nullptr, nullptr, 0), xmlFreeTextReader);
  while (r && xmlTextReaderRead(r.get()) == 1) {
    if (xmlTextReaderNodeType(r.get()) != XML_READER_TYPE_ELEMENT) continue;
    out[reinterpret_cast<const char*>(xmlTextReaderConstLocalName(r.get()))].insert(xmlTextReaderDepth(r.get()));
  }
  return out;
}

class CleLayoutTest : public EmulatorTest {};

TEST_F(CleLayoutTest, EveryOfferedCleWritesTheLayoutOfTheEngineItAdvertises) {
  const auto cles = basil::cle_release_names();
  ASSERT_GE(cles.size(), 11u);
  for (const auto& cle : cles) {
    SCOPED_TRACE("CLE " + cle);
    TearDown();
    SetUp();
    init("tds-8", "--cle " + cle);
    ASSERT_EQ(emu("reserve --user bob --width 2 --batch-id 7").rc, 0);
    // Negotiate as the client does.
    const auto engine = ask(basil::Dialect::k1_0, basil::EngineQuery{});
    const auto& info = std::get<basil::EngineInfo>(engine.body);
    EXPECT_EQ(info.version, basil::cle_release(cle)->engine_version);
    const auto dialect = basil::negotiate(info.version, info.basil_support);
    ASSERT_TRUE(dialect);
    ask(*dialect, basil::InventoryQuery{});
    const auto seen = depths_in(last_out_);
    const auto want = expected_depths(cle);
    for (const auto& [name, at] : seen) {
      if (name == "Message") continue;  // any depth
      auto it = want.find(name);
      ASSERT_NE(it, want.end()) << name << " is not in the client's table";
      EXPECT_EQ(at, std::set<int>{it->second}) << name;
    }
    EXPECT_TRUE(seen.count("MemoryAllocation")) << "the reservation's memory is shown";
  }
}

TEST_F(CleLayoutTest, BothLayoutsOf13MatchTheirGoldenFiles) {
  for (const std::string cle : {"5.2.0", "5.2"}) {
    SCOPED_TRACE("CLE " + cle);
    TearDown();
    SetUp();
    init("tds-8", "--cle " + cle);
    const std::string at_fixed_time = "env BASIL_EMULATOR_TIME=1700000000 " + kBinary;
    ASSERT_EQ(sh(at_fixed_time + " reserve --user bob --width 40 --batch-id 7").rc, 0);
    Ran r = sh(at_fixed_time,
               "<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"INVENTORY\"/>");
    const std::string golden = std::string(BASIL_TEST_DATA) + "/emulator/inventory-tds-8-cle" + cle + ".xml";
    EXPECT_EQ(r.out, slurp(golden)) << "regenerate with: basil-emulator init --preset tds-8 --cle " << cle
                                    << "; reserve --user bob --width 40 --batch-id 7 and the INVENTORY, both at "
                                       "BASIL_EMULATOR_TIME=1700000000, into "
                                    << golden;
    last_out_ = r.out;
    expect_valid(basil::Dialect::k1_3);
    if (cle == "5.2.0") {
      spit(dir_ + "/quirk.xml", r.out);
      Ran v = sh("xmllint --noout --relaxng '" + std::string(BASIL_SCHEMA_DIR) +
                 "/response-1.3-cle52quirk.rng' '" + dir_ + "/quirk.xml'");
      EXPECT_EQ(v.rc, 0) << v.err;
    }
  }
}

}  // namespace
