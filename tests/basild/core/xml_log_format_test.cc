#include "basild/core/xml_log_format.h"

#include <gtest/gtest.h>

namespace basild {
namespace {

XmlLogRecord rec(std::uint64_t id, XmlLogRecord::Direction d, std::string body) {
  XmlLogRecord r;
  r.time = "2024-05-01T12:00:00.000001Z";
  r.call_id = id;
  r.direction = d;
  r.kind = "RESERVE";
  r.transport = "local";
  r.body = std::move(body);
  if (d == XmlLogRecord::Direction::kResponse) {
    r.duration_ms = 12.5;
    r.status = "ok";
  }
  return r;
}

TEST(XmlLogFormatTest, RoundTripsBodiesHoldingAnything) {
  const std::string nasty = std::string("<a>\n#basil-xml-log v1 {\"bytes\":1}\n\0\xff</a>", 40);
  std::string text;
  std::vector<XmlLogRecord> in = {rec(1, XmlLogRecord::Direction::kRequest, nasty),
                                  rec(1, XmlLogRecord::Direction::kResponse, ""),
                                  rec(2, XmlLogRecord::Direction::kRequest, "\n\n")};
  in[1].diagnostics = "exit status 1; stderr: \xff noise";
  for (const auto& r : in) text += format_xml_log_record(r);
  const auto out = parse_xml_log(text);
  EXPECT_TRUE(out.problems.empty());
  ASSERT_EQ(out.records.size(), 3u);
  EXPECT_EQ(out.records[0].body, nasty);
  EXPECT_EQ(out.records[1].body, "");
  EXPECT_EQ(out.records[1].duration_ms, 12.5);
  EXPECT_EQ(out.records[1].status, "ok");
  EXPECT_NE(out.records[1].diagnostics.find("exit status 1"), std::string::npos);
  EXPECT_EQ(out.records[2].body, "\n\n");
  EXPECT_EQ(out.records[2].call_id, 2u);
}

TEST(XmlLogFormatTest, ACutRecordAtTheEndIsReportedAndLeftOut) {
  std::string text = format_xml_log_record(rec(1, XmlLogRecord::Direction::kRequest, "<x/>"));
  const auto second = format_xml_log_record(rec(2, XmlLogRecord::Direction::kRequest, "<yyyyyy/>"));
  text += second.substr(0, second.size() - 4);
  const auto out = parse_xml_log(text);
  ASSERT_EQ(out.records.size(), 1u);
  ASSERT_EQ(out.problems.size(), 1u);
  EXPECT_NE(out.problems[0].find("cut short"), std::string::npos);
}

TEST(XmlLogFormatTest, JunkBetweenRecordsIsSkipped) {
  std::string text = "junk line\n" + format_xml_log_record(rec(5, XmlLogRecord::Direction::kRequest, "<x/>")) +
                     "#basil-xml-log v1 {not json}\nmore junk\n" +
                     format_xml_log_record(rec(6, XmlLogRecord::Direction::kRequest, "<y/>"));
  const auto out = parse_xml_log(text);
  ASSERT_EQ(out.records.size(), 2u);
  EXPECT_EQ(out.records[1].call_id, 6u);
  EXPECT_EQ(out.problems.size(), 2u);
}

TEST(XmlLogFormatTest, ReplayPairsExchangesAndDecodesAnswers) {
  std::vector<XmlLogRecord> rs = {
      rec(1, XmlLogRecord::Direction::kRequest, "<BasilRequest protocol=\"1.3\" method=\"RELEASE\" reservation_id=\"9\"/>"),
      rec(2, XmlLogRecord::Direction::kRequest, "<q/>"),
      rec(1, XmlLogRecord::Direction::kResponse,
          "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\">\n <ResponseData status=\"FAILURE\" "
          "method=\"RELEASE\" error_class=\"PERMANENT\" error_source=\"BACKEND\">\n  <Message "
          "severity=\"ERROR\">ALPS error: apsched: No entry for resId 9</Message>\n </ResponseData>\n"
          "</BasilResponse>\n")};
  const auto text = replay_text(rs, {.show_xml = true});
  EXPECT_NE(text.find("call 1 RESERVE local 12.500 ms ok: PERMANENT ALPS BACKEND error: ALPS error: apsched: No entry for resId 9"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("call 2 RESERVE local (no response logged)"), std::string::npos) << text;
  EXPECT_NE(text.find(">>> request"), std::string::npos);
}

}  // namespace
}  // namespace basild
