// Hostile and garbage input: DOCTYPEs, entities, XInclude, limits, bad
// encodings, random damage. Every case ends in a clean error.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "basil_proto/codec.h"
#include "tests/basil_proto/decoder_test_util.h"
#include "tests/support/temp_dir.h"

namespace basil {
namespace {

using namespace std::chrono_literals;

// A FIFO nobody writes to: a parser that tried to read it would block, so a
// decode that returns proves the file was never opened for reading.
class Fifo {
 public:
  Fifo() {
    if (dir_.path().empty()) return;
    path_ = dir_.path() + "/fifo";
    if (::mkfifo(path_.c_str(), 0600) != 0) path_.clear();
  }
  Fifo(const Fifo&) = delete;
  Fifo& operator=(const Fifo&) = delete;

  const std::string& path() const { return path_; }

  // Releases a reader blocked in open(): opens the write end and closes it.
  void unblock() const {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  }

 private:
  basil_test::TempDir dir_{"basil-decoder"};
  std::string path_;
};

// Decodes on another thread; fails the test (instead of hanging) when the
// decoder blocks on the FIFO.
Result<Decoded> decode_guarded(const std::string& xml, const Fifo& fifo, std::size_t chunk) {
  auto f = std::async(std::launch::async,
                      [&xml, chunk] { return testing::decode_in_chunks(xml, chunk); });
  if (f.wait_for(10s) != std::future_status::ready) {
    ADD_FAILURE() << "the decoder blocked: it opened " << fifo.path();
    while (f.wait_for(100ms) != std::future_status::ready) fifo.unblock();
  }
  return f.get();
}

// Found by fuzz_decode_response: a declared encoding libxml2 hands to iconv
// ("UTF8-"), invalid bytes in a comment and junk after the root. libxml2's
// push parser accepted it whole and refused it in two chunks. Only the
// encodings libxml2 decodes itself are read now, whatever the chunking.
TEST(DecoderTest, AnEncodingOnlyIconvKnowsIsRefusedWholeAndInChunks) {
  const std::string doc =
      "<?xml version=\"1.0\" encoding=\"UTF8-\"?>\n<!-- A hend-made 3.1 \xff" "bINVERY fo. Not \x95 -->"
      "<BasilResponse protocol=\"1.0\">\n <ResponseData status=\"SUCCESS\" method=\"RELEASE\">\n"
      "  <Released/>\n </ResponseData>\n</BasilResponse>\n\xab\xff\xff" "CACTIVE{ aponse>\n";
  for (std::size_t cut = 0; cut <= doc.size(); ++cut) {
    Decoder d({}, Decoder::Expect::kResponse);
    if (d.feed(std::string_view(doc).substr(0, cut)).is_ok()) (void)d.feed(std::string_view(doc).substr(cut));
    auto r = d.finish();
    ASSERT_FALSE(r.is_ok()) << "cut at " << cut;
    EXPECT_EQ(r.status().code(), Code::kRefused) << "cut at " << cut << ": " << r.status().to_string();
  }
  auto whole = decode_response(doc);
  ASSERT_FALSE(whole.is_ok());
  EXPECT_NE(whole.status().message().find("encoding \"UTF8-\" refused"), std::string::npos)
      << whole.status().to_string();
  // The encodings libxml2 reads itself still decode.
  for (const char* enc : {"UTF-8", "utf-8", "US-ASCII", "ISO-8859-1"}) {
    auto ok = decode_response(std::string("<?xml version=\"1.0\" encoding=\"") + enc +
                              "\"?>\n<BasilResponse protocol=\"1.0\"><ResponseData status=\"SUCCESS\" "
                              "method=\"RELEASE\"><Released/></ResponseData></BasilResponse>\n");
    EXPECT_TRUE(ok.is_ok()) << enc << ": " << ok.status().to_string();
  }
}

TEST(DecoderTest, RefusesDoctypeWithoutReadingFiles) {
  Fifo fifo;
  ASSERT_FALSE(fifo.path().empty());
  const std::string docs[] = {
      // External general entity used in content and in an attribute.
      "<?xml version=\"1.0\"?>\n<!DOCTYPE BasilResponse [\n <!ENTITY x SYSTEM \"file://" +
          fifo.path() + "\">\n]>\n<BasilResponse protocol=\"1.3\">&x;</BasilResponse>\n",
      // External DTD subset.
      "<!DOCTYPE BasilResponse SYSTEM \"" + fifo.path() + "\"><BasilResponse protocol=\"1.3\"/>",
      // Parameter entity.
      "<!DOCTYPE BasilRequest [<!ENTITY % p SYSTEM \"" + fifo.path() +
          "\"> %p;]><BasilRequest protocol='1.3' method='QUERY' type='ENGINE'/>",
      // A harmless-looking DOCTYPE is refused as well.
      "<!DOCTYPE BasilResponse><BasilResponse protocol=\"1.3\"/>",
  };
  for (const std::string& xml : docs) {
    SCOPED_TRACE(xml);
    for (std::size_t chunk : {xml.size(), std::size_t{1}, std::size_t{7}}) {
      auto r = decode_guarded(xml, fifo, chunk);
      ASSERT_FALSE(r.is_ok());
      EXPECT_EQ(r.status().code(), Code::kRefused) << r.status().to_string();
      EXPECT_NE(r.status().message().find("DOCTYPE"), std::string::npos);
    }
  }
}

TEST(DecoderTest, RefusesExternalEntityToEtcPasswdAndNeverShowsIt) {
  const std::string xml =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE BasilResponse [<!ENTITY pw SYSTEM "
      "\"file:///etc/passwd\">]>\n<BasilResponse protocol=\"1.3\"><ResponseData "
      "status=\"FAILURE\" method=\"QUERY\"><Message severity=\"ERROR\">&pw;</Message>"
      "</ResponseData></BasilResponse>";
  auto r = decode(xml);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kRefused);
  EXPECT_EQ(r.status().to_string().find("root:"), std::string::npos);
  EXPECT_EQ(r.status().line(), 2);
}

TEST(DecoderTest, RefusesBillionLaughsQuickly) {
  std::string xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol \"lol\">\n";
  for (int i = 1; i <= 9; ++i) {
    xml += " <!ENTITY lol" + std::to_string(i) + " \"";
    for (int j = 0; j < 10; ++j)
      xml += "&lol" + (i == 1 ? std::string() : std::to_string(i - 1)) + ";";
    xml += "\">\n";
  }
  xml +=
      "]>\n<BasilResponse protocol=\"1.3\"><ResponseData status=\"FAILURE\" method=\"QUERY\">"
      "<Message severity=\"ERROR\">&lol9;</Message></ResponseData></BasilResponse>\n";
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t chunk : {xml.size(), std::size_t{1}, std::size_t{13}}) {
    auto r = testing::decode_in_chunks(xml, chunk);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Code::kRefused) << r.status().to_string();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST(DecoderTest, RefusesUndeclaredEntityButKeepsPredefinedOnes) {
  auto bad = decode(
      "<BasilResponse protocol=\"1.3\"><ResponseData status=\"FAILURE\" "
      "method=\"QUERY\"><Message severity=\"ERROR\">&nbsp;</Message>"
      "</ResponseData></BasilResponse>");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), Code::kRefused) << bad.status().to_string();

  auto in_attr = decode(
      "<BasilRequest protocol=\"1.3\" method=\"RESERVE\"><ReserveParamArray "
      "user_name=\"&x;\"><ReserveParam width=\"1\"/></ReserveParamArray>"
      "</BasilRequest>");
  ASSERT_FALSE(in_attr.is_ok());
  EXPECT_EQ(in_attr.status().code(), Code::kRefused) << in_attr.status().to_string();

  auto good = decode_request(
      "<BasilRequest protocol=\"1.3\" method=\"RESERVE\"><ReserveParamArray "
      "user_name=\"&lt;&gt;&amp;&quot;&apos;&#65;&#x42;&#9;\"><ReserveParam width=\"1\"/>"
      "</ReserveParamArray></BasilRequest>");
  ASSERT_TRUE(good.is_ok()) << good.status().to_string();
  EXPECT_EQ(std::get<ReserveRequest>(good->body).user_name, "<>&\"'AB\t");
}

TEST(DecoderTest, XIncludeIsNeverProcessed) {
  Fifo fifo;
  ASSERT_FALSE(fifo.path().empty());
  const std::string xml =
      "<BasilResponse protocol=\"1.3\"><ResponseData status=\"SUCCESS\" method=\"RELEASE\">"
      "<xi:include xmlns:xi=\"http://www.w3.org/2001/XInclude\" href=\"" +
      fifo.path() +
      "\" parse=\"text\"/><Released reservation_id=\"3\" claims=\"0\"/>"
      "</ResponseData></BasilResponse>";
  auto r = decode_guarded(xml, fifo, xml.size());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("xi:include"), std::string::npos);

  DecodeOptions strict;
  strict.strict = true;
  auto s = decode(xml, strict);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().code(), Code::kUnknownName);
}

TEST(DecoderTest, DeepNestingBeyondMaxDepthIsALimitError) {
  std::string xml =
      "<BasilResponse protocol=\"1.3\"><ResponseData status=\"SUCCESS\" method=\"QUERY\">";
  for (int i = 0; i < 100; ++i) xml += "<Deep>";
  for (int i = 0; i < 100; ++i) xml += "</Deep>";
  xml += "</ResponseData></BasilResponse>";
  auto r = decode(xml);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kLimitExceeded) << r.status().to_string();

  DecodeOptions roomy;
  roomy.max_depth = 200;
  auto ok = decode(xml, roomy);  // unknown subtree: skipped with one warning
  ASSERT_TRUE(ok.is_ok()) << ok.status().to_string();
  EXPECT_EQ(ok->warnings.size(), 1u);

  DecodeOptions shallow;
  shallow.max_depth = 5;
  auto inv = decode(testing::make_inventory_1_3(2, 1), shallow);
  ASSERT_FALSE(inv.is_ok());
  EXPECT_EQ(inv.status().code(), Code::kLimitExceeded);
  EXPECT_EQ(inv.status().path(),
            "/BasilResponse/ResponseData/Inventory/NodeArray/Node/SocketArray");
}

TEST(DecoderTest, HundredThousandOpenElementsEndCleanly) {
  std::string xml = "<BasilResponse protocol=\"1.3\">";
  for (int i = 0; i < 100000; ++i) xml += "<a>";
  for (std::size_t chunk : {xml.size(), std::size_t{4096}}) {
    auto r = testing::decode_in_chunks(xml, chunk);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Code::kLimitExceeded);
  }
}

TEST(DecoderTest, HugeAttributeBeyondMaxTextBytesIsALimitError) {
  const std::string big(2u << 20, 'u');
  const std::string xml =
      "<BasilRequest protocol=\"1.3\" method=\"RESERVE\"><ReserveParamArray user_name=\"" + big +
      "\"><ReserveParam width=\"1\"/></ReserveParamArray></BasilRequest>";
  auto r = decode(xml);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kLimitExceeded) << r.status().to_string();
  EXPECT_NE(r.status().message().find("user_name"), std::string::npos);
  EXPECT_LT(r.status().message().size(), 400u);

  DecodeOptions roomy;
  roomy.max_text_bytes = 4u << 20;
  auto ok = decode(xml, roomy);
  ASSERT_TRUE(ok.is_ok()) << ok.status().to_string();
  EXPECT_EQ(std::get<ReserveRequest>(ok->request().body).user_name.size(), big.size());
}

TEST(DecoderTest, LongTextNodeBeyondMaxTextBytesIsALimitError) {
  DecodeOptions small;
  small.max_text_bytes = 100;
  const std::string xml =
      "<BasilResponse protocol=\"1.3\"><ResponseData status=\"FAILURE\" "
      "method=\"QUERY\"><Message severity=\"ERROR\">" +
      std::string(150, 'x') + "</Message></ResponseData></BasilResponse>";
  for (std::size_t chunk : {xml.size(), std::size_t{1}, std::size_t{7}}) {
    auto r = testing::decode_in_chunks(xml, chunk, small);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Code::kLimitExceeded) << r.status().to_string();
  }
  // Whitespace between elements counts too.
  const std::string blanks = "<BasilResponse protocol=\"1.3\">" + std::string(150, ' ') +
                             "<ResponseData status=\"FAILURE\" method=\"QUERY\"/></BasilResponse>";
  auto w = decode(blanks, small);
  ASSERT_FALSE(w.is_ok());
  EXPECT_EQ(w.status().code(), Code::kLimitExceeded);
}

TEST(DecoderTest, DocumentBeyondMaxDocumentBytesIsALimitError) {
  DecodeOptions small;
  small.max_document_bytes = 1000;
  const std::string xml = testing::make_inventory_1_3(1, 0);
  ASSERT_GT(xml.size(), 1000u);
  for (std::size_t chunk : {xml.size(), std::size_t{100}}) {
    auto r = testing::decode_in_chunks(xml, chunk, small);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Code::kLimitExceeded) << r.status().to_string();
  }
  small.max_document_bytes = xml.size();
  EXPECT_TRUE(decode(xml, small).is_ok());
}

TEST(DecoderTest, InvalidUtf8IsMalformed) {
  for (const char* bad : {"\xff\xfe", "\xc3", "\xe2\x82", "\xc0\xaf", "\xed\xa0\x80"}) {
    const std::string xml = std::string(
                                "<BasilRequest protocol=\"1.3\" method=\"RESERVE\">"
                                "<ReserveParamArray user_name=\"a") +
                            bad +
                            "b\"><ReserveParam width=\"1\"/></ReserveParamArray></BasilRequest>";
    auto r = decode(xml);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Code::kMalformed) << r.status().to_string();
  }
  // Valid multi-byte UTF-8 is fine.
  auto ok = decode_request(
      "<BasilRequest protocol=\"1.3\" method=\"RESERVE\"><ReserveParamArray "
      "user_name=\"j\xc3\xb8rg\xe2\x82\xac\"><ReserveParam width=\"1\"/>"
      "</ReserveParamArray></BasilRequest>");
  ASSERT_TRUE(ok.is_ok()) << ok.status().to_string();
  EXPECT_EQ(std::get<ReserveRequest>(ok->body).user_name, "j\xc3\xb8rg\xe2\x82\xac");
}

TEST(DecoderTest, NotXmlAtAllIsMalformed) {
  for (std::string junk :
       {std::string("hello"), std::string("{\"json\": 1}"), std::string("<"),
        std::string("<BasilResponse"), std::string("\0\1\2<a/>", 7),
        std::string("<BasilResponse protocol=\"1.3\"></BasilRequest>"),
        std::string("<BasilResponse protocol=\"1.3\" protocol=\"1.3\"/>"),
        std::string("<BasilResponse protocol=\"1.3\"><ResponseData status=\"FAILURE\" "
                    "method=\"QUERY\"/></BasilResponse><BasilResponse/>")}) {
    auto r = decode(junk);
    ASSERT_FALSE(r.is_ok()) << junk;
    EXPECT_EQ(r.status().code(), Code::kMalformed) << junk << ": " << r.status().to_string();
  }
}

TEST(DecoderTest, RandomlyDamagedDocumentsNeverCrash) {
  const std::string xml =
      testing::read_file(std::string(BASIL_TEST_DATA) + "/basil/samples/inventory-1.3.xml");
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> pos(0, xml.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  int failures = 0;
  for (int round = 0; round < 300; ++round) {
    std::string damaged = xml;
    const int hits = 1 + round % 4;
    for (int h = 0; h < hits; ++h) damaged[pos(rng)] = static_cast<char>(byte(rng));
    auto r = testing::decode_in_chunks(damaged, 1 + static_cast<std::size_t>(round) * 37 % 5000);
    if (!r.is_ok()) {
      ++failures;
      EXPECT_NE(r.status().code(), Code::kOk);
      EXPECT_FALSE(r.status().message().empty());
    }
  }
  EXPECT_GT(failures, 0);
}

// A start tag of `n` attributes in a forwarded RESERVE, as a hostile caller
// writes it (well-formed, each name unique).
std::string reserve_with_attributes(std::size_t n, std::string_view quote = "\"") {
  std::string xml = "<?xml version=\"1.0\"?>\n<BasilRequest protocol=\"1.3\" method=\"RESERVE\">\n<ReserveParamArray";
  for (std::size_t i = 0; i < n; ++i) {
    xml += " a" + std::to_string(i) + "=";
    xml += quote;
    xml += "x";
    xml += quote;
  }
  xml += " user_name=\"u\" batch_id=\"1\"><ReserveParam width=\"1\"/></ReserveParamArray></BasilRequest>";
  return xml;
}

TEST(DecoderTest, ElementWithMoreThanMaxAttributesIsRefusedNamingIt) {
  // 95,000 attributes: under 1 MiB, and seconds of libxml2's duplicate check
  // if it ever read the tag.
  const std::string xml = reserve_with_attributes(95'000);
  ASSERT_LT(xml.size(), std::size_t{1} << 20);
  for (std::size_t chunk : {xml.size(), std::size_t{4096}, std::size_t{7}}) {
    auto r = testing::decode_in_chunks(xml, chunk);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Code::kLimitExceeded) << r.status().to_string();
    EXPECT_NE(r.status().message().find("element ReserveParamArray"), std::string::npos) << r.status().to_string();
    EXPECT_NE(r.status().message().find("max_attributes (64)"), std::string::npos) << r.status().to_string();
  }
}

TEST(DecoderTest, AttributesUpToTheLimitDecode) {
  DecodeOptions o;
  o.max_attributes = 66;  // the 64 unknown ones, user_name and batch_id
  auto ok = decode(reserve_with_attributes(64, "'"), o);
  ASSERT_TRUE(ok.is_ok()) << ok.status().to_string();
  EXPECT_EQ(std::get<ReserveRequest>(ok->request().body).user_name, "u");
  o.max_attributes = 65;
  auto over = decode(reserve_with_attributes(64, "'"), o);
  ASSERT_FALSE(over.is_ok());
  EXPECT_EQ(over.status().code(), Code::kLimitExceeded);
}

TEST(DecoderTest, AttributeCountIgnoresEqualsSignsInValuesCommentsAndCData) {
  DecodeOptions o;
  o.max_attributes = 3;
  const std::string xml =
      "<?xml version=\"1.0\"?><!-- a=1 b=2 c=3 d=4 --><BasilResponse protocol=\"1.3\">"
      "<ResponseData status=\"FAILURE\" method=\"QUERY\" error_class=\"PERMANENT\">"
      "<Message severity=\"ERROR\" x=\"a=b=c=d=e\"><![CDATA[<p a=1 b=2 c=3 d=4>]]> q=1 r=2 s=3 t=4"
      "</Message></ResponseData></BasilResponse>";
  for (std::size_t chunk : {xml.size(), std::size_t{1}, std::size_t{5}}) {
    auto r = testing::decode_in_chunks(xml, chunk, o);
    EXPECT_TRUE(r.is_ok()) << chunk << ": " << r.status().to_string();
  }
}

TEST(DecoderTest, AttributeBoundHoldsForUtf16Documents) {
  // UTF-16LE without a byte-order mark: each ASCII character and a NUL.
  auto utf16 = [](std::string_view ascii) {
    std::string out;
    for (char c : ascii) {
      out += c;
      out += '\0';
    }
    return out;
  };
  const std::string xml = utf16(reserve_with_attributes(1000));
  for (std::size_t chunk : {xml.size(), std::size_t{3}}) {
    auto r = testing::decode_in_chunks(xml, chunk);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Code::kLimitExceeded) << r.status().to_string();
  }
  auto small = decode(utf16(reserve_with_attributes(10)));
  EXPECT_TRUE(small.is_ok()) << small.status().to_string();
}

}  // namespace
}  // namespace basil
