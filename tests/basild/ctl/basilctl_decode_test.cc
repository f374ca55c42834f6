// basilctl decode as a user runs it: the real binary on real files.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "basild/ctl/decode_summary.h"
#include "tests/support/files.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

// basilctl with a shell command line suffix (may hold redirections).
basil_test::Ran run_basilctl(const std::string& args) {
  return basil_test::run_shell(std::string(BASIL_BINARY_DIR) + "/basild/basilctl " + args, {},
                               {.err = basil_test::Redirect::pipe()});
}

// `content` in a file of this test's, removed with its process.
std::string write_temp(const std::string& name, const std::string& content) {
  static const std::string dir = basil_test::scratch_dir("basilctl-decode");
  const std::string path = dir + "/" + name;
  basil_test::write_file(path, content);
  return path;
}

constexpr const char* kInventory13 = R"(<?xml version="1.0"?>
<BasilResponse protocol="1.3">
 <ResponseData status="SUCCESS" method="QUERY">
  <Inventory mpp_host="tds" timestamp="1380000000">
   <NodeArray changecount="5" schedchangecount="2">
    <Node node_id="24" name="c0-0c0s6n0" architecture="XT" role="BATCH" state="UP">
     <SocketArray>
      <Socket ordinal="0" architecture="x86_64" clock_mhz="2600">
       <SegmentArray>
        <Segment ordinal="0">
         <ComputeUnitArray>
          <ComputeUnit ordinal="0">
           <ProcessorArray>
            <Processor ordinal="0"/>
            <Processor ordinal="1"/>
           </ProcessorArray>
          </ComputeUnit>
         </ComputeUnitArray>
         <MemoryArray>
          <Memory type="OS" page_size_kb="4" page_count="8388608"/>
         </MemoryArray>
         <LabelArray/>
        </Segment>
       </SegmentArray>
      </Socket>
     </SocketArray>
    </Node>
    <Node node_id="25" name="c0-0c0s6n1" architecture="XT" role="BATCH" state="DOWN">
     <SocketArray/>
    </Node>
   </NodeArray>
   <ReservationArray/>
  </Inventory>
 </ResponseData>
</BasilResponse>
)";

TEST(BasilctlDecodeTest, PrintsInventoryFiguresAsJson) {
  auto r = run_basilctl("decode " + write_temp("inv13.xml", kInventory13));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["protocol"], "1.3");
  EXPECT_EQ(j["dialect"], "1.3");
  EXPECT_EQ(j["kind"], "response");
  EXPECT_EQ(j["method"], "QUERY");
  EXPECT_EQ(j["type"], "INVENTORY");
  EXPECT_EQ(j["status"], "SUCCESS");
  EXPECT_EQ(j["nodes"], 2);
  EXPECT_EQ(j["nodes_by_state"]["UP"], 1);
  EXPECT_EQ(j["nodes_by_state"]["DOWN"], 1);
  EXPECT_EQ(j["processors"], 2);
  EXPECT_EQ(j["compute_units"], 1);
  EXPECT_EQ(j["reservations"], 0);
  EXPECT_EQ(j["changecount"], 5);
  EXPECT_EQ(j["schedchangecount"], 2);
  EXPECT_TRUE(j["warnings"].is_array());
}

TEST(BasilctlDecodeTest, ReadsStandardInput) {
  std::string path = write_temp("fail.xml",
                                "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"\">\n"
                                " <ResponseData status=\"FAILURE\" method=\"UNDEFINED\" error_class=\"PERMANENT\" "
                                "error_source=\"BACKEND\">\n  <Message severity=\"ERROR\">BASIL version mismatch: "
                                "us=1.3,1.2,1.1,1.0, them=9.9</Message>\n </ResponseData>\n</BasilResponse>\n");
  auto r = run_basilctl("decode - <" + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["status"], "FAILURE");
  EXPECT_EQ(j["error_class"], "PERMANENT");
  EXPECT_EQ(j["error_source"], "BACKEND");
  ASSERT_EQ(j["messages"].size(), 1u);
  EXPECT_NE(j["messages"][0]["text"].get<std::string>().find("version mismatch"), std::string::npos);
}

TEST(BasilctlDecodeTest, InvalidDocumentExitsOneWithFileLineColumn) {
  std::string path = write_temp("bad.xml", "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\">\n <Response");
  auto r = run_basilctl("decode " + path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(r.err.rfind(path + ":", 0), 0u) << r.err;
  // FILE:LINE:COL: message
  auto rest = r.err.substr(path.size() + 1);
  EXPECT_GT(std::stoi(rest), 0) << r.err;
}

TEST(BasilctlDecodeTest, StrictModeFailsOnUnknownElementThatTolerantModeWarnsAbout) {
  std::string doc = kInventory13;
  doc.replace(doc.find("<ReservationArray/>"), 19, "<ReservationArray/><Gadget/>");
  std::string path = write_temp("unknown.xml", doc);
  auto tolerant = run_basilctl("decode " + path);
  ASSERT_EQ(tolerant.exit_code, 0) << tolerant.err;
  EXPECT_FALSE(nlohmann::json::parse(tolerant.out)["warnings"].empty());
  auto strict = run_basilctl("decode --strict " + path);
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_NE(strict.err.find("Gadget"), std::string::npos) << strict.err;
}

TEST(BasilctlDecodeTest, SummarizesReserveRequestWidth) {
  std::string path = write_temp("reserve.xml",
                                "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.3\" method=\"RESERVE\">\n"
                                " <ReserveParamArray user_name=\"alice\" batch_id=\"149712\">\n"
                                "  <ReserveParam architecture=\"XT\" width=\"65600\" depth=\"1\" nppn=\"32\" nppcu=\"0\"/>\n"
                                " </ReserveParamArray>\n</BasilRequest>\n");
  auto r = run_basilctl("decode " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "request");
  EXPECT_EQ(j["method"], "RESERVE");
  EXPECT_EQ(j["width"], 65600);
  EXPECT_EQ(j["batch_id"], "149712");
}

}  // namespace
