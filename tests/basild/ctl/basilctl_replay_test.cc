// basilctl replay on an XML log written in the daemon's own format.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <utility>
#include <string>

#include "basild/core/xml_log_format.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

// A shell command line's output, stderr with stdout.
std::string run(const std::string& cmd, int* code) {
  const auto r = basil_test::run_shell(cmd, {}, {.err = basil_test::Redirect::to_stdout()});
  *code = r.exit_code;
  return r.out;
}

// This test's files, removed with its process.
std::string temp_path(const std::string& name) {
  static const std::string dir = basil_test::scratch_dir("basilctl-replay");
  return dir + "/" + name;
}

// Two exchanges of the daemon's XML log format: a RESERVE of 12.5 ms and a
// QUERY INVENTORY of 40 ms.
std::string two_exchanges() {
  std::string log;
  int id = 1;
  for (const auto& [kind, ms] : {std::pair<std::string, double>{"RESERVE", 12.5}, {"INVENTORY", 40.0}}) {
    basild::XmlLogRecord req;
    req.time = "2026-11-22T01:00:00.000001Z";
    req.call_id = static_cast<std::uint64_t>(id++);
    req.kind = kind;
    req.transport = "local";
    req.body = "<BasilRequest/>\n";
    basild::XmlLogRecord resp = req;
    resp.direction = basild::XmlLogRecord::Direction::kResponse;
    resp.duration_ms = ms;
    resp.status = "ok";
    resp.body = "<BasilResponse/>\n";
    log += basild::format_xml_log_record(req) + basild::format_xml_log_record(resp);
  }
  return log;
}

TEST(BasilctlReplayTest, StatsSummarisesTheLogPerMethodAndDrawsItsChart) {
  const std::string path = temp_path("replay-stats.log");
  std::ofstream(path) << two_exchanges();
  int code = -1;
  const std::string basilctl = std::string(BASIL_BINARY_DIR) + "/basild/basilctl";
  std::string out = run(basilctl + " replay --stats " + path, &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("RESERVE"), std::string::npos) << out;
  EXPECT_NE(out.find("12.5"), std::string::npos) << out;
  EXPECT_NE(out.find("INVENTORY"), std::string::npos) << out;
  EXPECT_NE(out.find("40.0"), std::string::npos) << out;
  EXPECT_EQ(out.find("call 1 RESERVE"), std::string::npos) << "a table, not the exchanges: " << out;

  const std::string svg = temp_path("replay-stats.svg");
  out = run(basilctl + " replay --stats --chart " + svg + " " + path, &code);
  EXPECT_EQ(code, 0) << out;
  std::stringstream read;
  read << std::ifstream(svg).rdbuf();
  const std::string text = read.str();
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("RESERVE"), std::string::npos);
  // A chart needs the statistics.
  run(basilctl + " replay --chart " + svg + " " + path, &code);
  EXPECT_EQ(code, 2);
}

TEST(BasilctlReplayTest, PrintsEachExchangeWithItsTimingAndReportsACutRecord) {
  basild::XmlLogRecord req;
  req.time = "2026-11-22T01:00:00.000001Z";
  req.call_id = 41;
  req.kind = "RESERVE";
  req.transport = "local";
  req.body = "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.3\" method=\"RESERVE\"/>\n";
  basild::XmlLogRecord resp = req;
  resp.direction = basild::XmlLogRecord::Direction::kResponse;
  resp.duration_ms = 12.5;
  resp.status = "ok";
  resp.body =
      "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\">\n <ResponseData status=\"SUCCESS\" "
      "method=\"RESERVE\">\n  <Reserved reservation_id=\"9\">\n   <ReservedNodeArray>\n    <ReservedNode "
      "node_id=\"24\"/>\n   </ReservedNodeArray>\n  </Reserved>\n </ResponseData>\n</BasilResponse>\n";
  std::string log = basild::format_xml_log_record(req) + basild::format_xml_log_record(resp);
  std::string cut = basild::format_xml_log_record(req);
  log += cut.substr(0, cut.size() - 10);  // a record still being written
  std::string path = temp_path("replay.log");
  std::ofstream(path) << log;

  int code = -1;
  std::string out = run(std::string(BASIL_BINARY_DIR) + "/basild/basilctl replay " + path, &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("call 41 RESERVE local 12.500 ms ok"), std::string::npos) << out;
  EXPECT_NE(out.find("reservation 9"), std::string::npos) << out;
  EXPECT_NE(out.find(path + ":"), std::string::npos) << "the cut record is reported: " << out;

  std::string xml = run(std::string(BASIL_BINARY_DIR) + "/basild/basilctl replay --xml " + path, &code);
  EXPECT_NE(xml.find("<Reserved reservation_id=\"9\">"), std::string::npos) << xml;
}

}  // namespace
