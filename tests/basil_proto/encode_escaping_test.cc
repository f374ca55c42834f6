// The encoder escapes exactly as libxml2's xmlTextWriter does: every value
// the encoder writes, character by character and in random mixes, is
// compared with what xmlTextWriterWriteAttribute / xmlTextWriterWriteString
// write for it in a document without an encoding.
#include <libxml/xmlwriter.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "basil_proto/codec.h"
#include "tests/basil_proto/golden_models.h"

namespace basil {
namespace {

const xmlChar* X(const char* s) { return reinterpret_cast<const xmlChar*>(s); }

struct BufferFree {
  void operator()(xmlBuffer* b) const { xmlBufferFree(b); }
};
struct WriterFree {
  void operator()(xmlTextWriter* w) const { xmlFreeTextWriter(w); }
};

// `<e a="VALUE"/>` or `<e>VALUE</e>` written by xmlTextWriter; returns VALUE
// as it stands in the document.
std::string reference(const std::string& value, bool attribute) {
  std::unique_ptr<xmlBuffer, BufferFree> buf(xmlBufferCreate());
  std::unique_ptr<xmlTextWriter, WriterFree> w(xmlNewTextWriterMemory(buf.get(), 0));
  EXPECT_GE(xmlTextWriterStartDocument(w.get(), nullptr, nullptr, nullptr), 0);
  EXPECT_GE(xmlTextWriterStartElement(w.get(), X("e")), 0);
  if (attribute)
    EXPECT_GE(xmlTextWriterWriteAttribute(w.get(), X("a"), X(value.c_str())), 0);
  else
    EXPECT_GE(xmlTextWriterWriteString(w.get(), X(value.c_str())), 0);
  EXPECT_GE(xmlTextWriterEndDocument(w.get()), 0);
  w.reset();  // flushes into buf
  const std::string doc(reinterpret_cast<const char*>(xmlBufferContent(buf.get())),
                        static_cast<std::size_t>(xmlBufferLength(buf.get())));
  const std::string open = attribute ? "<e a=\"" : "<e>";
  const std::string close = attribute ? "\"/>" : "</e>";
  const std::size_t from = doc.find(open);
  const std::size_t to = doc.rfind(close);
  if (from == std::string::npos || to == std::string::npos || to < from + open.size()) return "<bad reference>";
  return doc.substr(from + open.size(), to - from - open.size());
}

// The text between `open` and the next `close` in what the encoder wrote.
std::string between(const std::string& xml, const std::string& open, const std::string& close) {
  const std::size_t from = xml.find(open);
  if (from == std::string::npos) return "<not found>";
  const std::size_t to = xml.find(close, from + open.size());
  if (to == std::string::npos) return "<not closed>";
  return xml.substr(from + open.size(), to - from - open.size());
}

std::string encoded_attribute(const std::string& value) {
  ReserveRequest q;
  q.user_name = value;
  q.params = {golden::param(1)};
  auto xml = encode_request(make_request(Dialect::k1_3, q));
  if (!xml) return "<refused: " + xml.status().message() + ">";
  return between(*xml, "user_name=\"", "\"");
}

std::string encoded_text(const std::string& value) {
  Response r = golden::failure(Dialect::k1_3, "1.3", Method::kReserve, ErrorClass::kPermanent, value);
  auto xml = encode_response(r);
  if (!xml) return "<refused: " + xml.status().message() + ">";
  return between(*xml, "<Message severity=\"ERROR\">", "</Message>");
}

// Every character XML 1.0 allows below U+0080, and some beyond it in each
// UTF-8 length, including the edges of the allowed ranges.
std::vector<std::string> characters() {
  std::vector<std::string> out = {"\t", "\n", "\r"};
  for (char c = 0x20; c < 0x7F; ++c) out.emplace_back(1, c);
  for (const char* u : {"\xC2\x80", "\xC3\xA9", "\xDF\xBF", "\xE0\xA0\x80", "\xE2\x82\xAC", "\xED\x9F\xBF",
                        "\xEE\x80\x80", "\xEF\xBF\xBD", "\xF0\x90\x80\x80", "\xF0\x9F\x98\x80",
                        "\xF4\x8F\xBF\xBF"})
    out.emplace_back(u);
  return out;
}

TEST(EncoderEscapingTest, EachCharacterInAnAttributeIsWrittenAsXmlTextWriterWritesIt) {
  for (const std::string& c : characters()) {
    for (const std::string& value : {c, "a" + c + "b"}) {
      SCOPED_TRACE(testing::PrintToString(value));
      EXPECT_EQ(encoded_attribute(value), reference(value, true));
    }
  }
}

// TAB and LF are the encoder's own choice in text (character references,
// so that a value stays on one line); everything else is libxml2's.
TEST(EncoderEscapingTest, EachCharacterInTextIsWrittenAsXmlTextWriterWritesIt) {
  for (const std::string& c : characters()) {
    for (const std::string& value : {c, "a" + c + "b"}) {
      SCOPED_TRACE(testing::PrintToString(value));
      std::string want;
      std::size_t pos = 0;
      while (pos <= value.size()) {
        const std::size_t special = value.find_first_of("\t\n", pos);
        const std::size_t stop = special == std::string::npos ? value.size() : special;
        if (stop > pos) want += reference(value.substr(pos, stop - pos), false);
        if (special == std::string::npos) break;
        want += value[special] == '\t' ? "&#9;" : "&#10;";
        pos = special + 1;
      }
      EXPECT_EQ(encoded_text(value), want);
    }
  }
}

TEST(EncoderEscapingTest, RandomMixesAreWrittenAsXmlTextWriterWritesThem) {
  const std::vector<std::string> chars = characters();
  std::mt19937 rng(20261122);
  std::uniform_int_distribution<std::size_t> pick(0, chars.size() - 1);
  std::uniform_int_distribution<int> length(1, 40);
  for (int i = 0; i < 2000; ++i) {
    std::string value;
    for (int n = length(rng); n > 0; --n) value += chars[pick(rng)];
    SCOPED_TRACE(testing::PrintToString(value));
    ASSERT_EQ(encoded_attribute(value), reference(value, true));
    if (value.find_first_of("\t\n") == std::string::npos) {
      ASSERT_EQ(encoded_text(value), reference(value, false));
    }
  }
}

}  // namespace
}  // namespace basil
