// Tolerance of unknown enumerated values, walked over every enumerated
// attribute of every dialect: each golden document (requests and responses,
// 1.0 to 1.3) has one enumerated attribute at a time set to a value outside
// its list. The tolerant decoder reads it with a warning naming the
// attribute and keeps it as the unknown member (re-encoded it reads
// "UNKNOWN"); the strict decoder refuses it, naming the attribute. The value
// "UNKNOWN" itself is one both accept silently. Only a request's method and
// query type, which say what the document is, are refused in both modes.
#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <filesystem>
#include <functional>
#include <tuple>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "basil_proto/codec.h"
#include "tests/support/text.h"

namespace basil {
namespace {

struct EnumAttr {
  std::string element;
  std::string attribute;
  bool operator<(const EnumAttr& o) const { return std::tie(element, attribute) < std::tie(o.element, o.attribute); }
};

// Every enumerated attribute of BASIL 1.0-1.3 (the values each one may take
// are listed in the model's enums).
const std::vector<EnumAttr> kEnumerated = {
    // Responses.
    {"ResponseData", "status"}, {"ResponseData", "method"}, {"ResponseData", "error_class"},
    {"ResponseData", "error_source"}, {"Message", "severity"}, {"Node", "architecture"}, {"Node", "role"},
    {"Node", "state"}, {"Processor", "architecture"}, {"Socket", "architecture"}, {"Memory", "type"},
    {"Label", "type"}, {"Label", "disposition"}, {"Accelerator", "state"}, {"Reservation", "reservation_mode"},
    {"Reservation", "gpc_mode"}, {"Reservation", "status"}, {"Application", "status"}, {"Up", "role"}, {"Up", "architecture"},
    {"Down", "role"}, {"Down", "architecture"}, {"Down", "state"},
    // Requests.
    {"ReserveParam", "reservation_mode"}, {"ReserveParam", "gpc_mode"}, {"ReserveParam", "p-governor"},
    {"MemoryParam", "type"}, {"LabelParam", "type"}, {"LabelParam", "disposition"}, {"Reservation", "action"},
    {"Application", "action"}};

using DocPtr = std::unique_ptr<xmlDoc, void (*)(xmlDocPtr)>;

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::filesystem::path> golden_documents() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(BASIL_TEST_DATA "/basil"))
    if (e.path().extension() == ".xml") out.push_back(e.path());
  return out;
}

std::vector<xmlNodePtr> elements(xmlNodePtr n) {
  std::vector<xmlNodePtr> out;
  for (; n != nullptr; n = n->next) {
    if (n->type != XML_ELEMENT_NODE) continue;
    out.push_back(n);
    for (auto* c : elements(n->children)) out.push_back(c);
  }
  return out;
}

std::string dump(xmlDocPtr doc) {
  xmlChar* mem = nullptr;
  int size = 0;
  xmlDocDumpMemory(doc, &mem, &size);
  std::string s(reinterpret_cast<const char*>(mem), static_cast<std::size_t>(size));
  xmlFree(mem);
  return s;
}

// `xml` with the `index`-th element named like `a` given `value`; "" when
// there is no such element.
std::string with_value(const std::string& xml, const EnumAttr& a, std::size_t index, const std::string& value) {
  DocPtr doc(xmlReadMemory(xml.data(), static_cast<int>(xml.size()), nullptr, nullptr, 0), xmlFreeDoc);
  std::size_t seen = 0;
  for (xmlNodePtr n : elements(xmlDocGetRootElement(doc.get()))) {
    if (a.element != reinterpret_cast<const char*>(n->name)) continue;
    if (!xmlHasProp(n, reinterpret_cast<const xmlChar*>(a.attribute.c_str()))) continue;
    if (seen++ != index) continue;
    xmlSetProp(n, reinterpret_cast<const xmlChar*>(a.attribute.c_str()),
               reinterpret_cast<const xmlChar*>(value.c_str()));
    return dump(doc.get());
  }
  return {};
}

// The document re-encoded from its decoded model ("" when the model cannot
// be written back, as for a SUCCESS whose method was not known).
std::string reencoded(const Decoded& d) {
  auto xml = d.is_request() ? encode_request(d.request()) : encode_response(d.response());
  return xml ? *xml : std::string();
}

TEST(EnumToleranceTest, EveryEnumeratedAttributeOfEveryDialectIsAWarningWhenTolerantAndAnErrorWhenStrict) {
  const auto docs = golden_documents();
  ASSERT_GT(docs.size(), 80u);
  std::set<EnumAttr> covered;
  for (const auto& path : docs) {
    const std::string xml = slurp(path);
    const auto original = decode(xml);
    ASSERT_TRUE(original) << path;
    const std::string before = reencoded(*original);
    for (const auto& a : kEnumerated) {
      // The first occurrence of the attribute in the document.
      const std::string foo = with_value(xml, a, 0, "FOO");
      if (foo.empty()) continue;
      covered.insert(a);
      const std::string where = path.filename().string() + " (" + path.parent_path().filename().string() +
                                "): " + a.element + "@" + a.attribute;
      const auto tolerant = decode(foo);
      ASSERT_TRUE(tolerant) << where << ": " << tolerant.status().to_string();
      bool warned = false;
      for (const auto& w : tolerant->warnings)
        warned = warned || w.find(a.element + "@" + a.attribute + ": unknown value \"FOO\"") != std::string::npos;
      EXPECT_TRUE(warned) << where;
      if (a.element == "ResponseData" && a.attribute == "method") {
        EXPECT_EQ(tolerant->response().method, Method::kUndefined) << where;
      } else {
        const std::string after = reencoded(*tolerant);
        EXPECT_EQ(basil_test::count_of(after, "\"UNKNOWN\""), basil_test::count_of(before, "\"UNKNOWN\"") + 1)
            << where << "\n" << after;
      }
      DecodeOptions strict;
      strict.strict = true;
      const auto refused = decode(foo, strict);
      ASSERT_FALSE(refused) << where;
      EXPECT_EQ(refused.status().code(), Code::kInvalidValue) << where;
      EXPECT_NE(refused.status().message().find(a.element + "@" + a.attribute), std::string::npos)
          << where << ": " << refused.status().message();
      // The model's own name for an unknown value is accepted by both, silently.
      const std::string unknown = with_value(xml, a, 0, a.element == "ResponseData" && a.attribute == "method"
                                                            ? "UNDEFINED"
                                                            : "UNKNOWN");
      const auto named = decode(unknown, strict);
      if (!(a.element == "ResponseData" && a.attribute == "method" && original->response().ok())) {
        ASSERT_TRUE(named) << where << ": " << named.status().to_string();
        EXPECT_EQ(named->warnings.size(), original->warnings.size()) << where;
      }
    }
  }
  for (const auto& a : kEnumerated) EXPECT_TRUE(covered.count(a)) << a.element << "@" << a.attribute << " not walked";
}

TEST(EnumToleranceTest, MemoryLabelAndDispositionValuesAreKeptAsUnknown) {
  const std::string xml = slurp(BASIL_TEST_DATA "/basil/1.0/query_inventory.response.xml");
  // The first memory is node 32's; the first label node 33's.
  for (const auto& [a, check] : std::vector<std::pair<EnumAttr, std::function<bool(const Inventory&)>>>{
           {{"Memory", "type"}, [](const Inventory& i) { return i.nodes.at(0).memory.at(0).type == MemoryType::kUnknown; }},
           {{"Label", "type"}, [](const Inventory& i) { return i.nodes.at(1).labels.at(0).type == LabelType::kUnknown; }},
           {{"Label", "disposition"},
            [](const Inventory& i) { return i.nodes.at(1).labels.at(0).disposition == LabelDisposition::kUnknown; }}}) {
    for (const std::string value : {"FOO", "UNKNOWN"}) {
      const auto r = decode_response(with_value(xml, a, 0, value));
      ASSERT_TRUE(r) << a.element << "@" << a.attribute << "=" << value << ": " << r.status().to_string();
      EXPECT_TRUE(check(std::get<Inventory>(r->body))) << a.element << "@" << a.attribute;
    }
  }
}

TEST(EnumToleranceTest, ARequestsMethodAndQueryTypeAreRefusedInBothModes) {
  for (const std::string xml : {"<BasilRequest protocol=\"1.3\" method=\"FOO\"/>",
                                "<BasilRequest protocol=\"1.3\" method=\"QUERY\" type=\"FOO\"/>"}) {
    DecodeOptions strict;
    strict.strict = true;
    EXPECT_FALSE(decode_request(xml)) << xml;
    EXPECT_FALSE(decode_request(xml, strict)) << xml;
  }
}

TEST(EnumToleranceTest, ASuccessWhoseMethodIsUnknownIsReadByItsBody) {
  const std::string xml = slurp(BASIL_TEST_DATA "/basil/1.3/query_inventory.response.xml");
  const auto r = decode_response(with_value(xml, {"ResponseData", "method"}, 0, "INVENTORIZE"));
  ASSERT_TRUE(r) << r.status().to_string();
  EXPECT_EQ(r->method, Method::kUndefined);
  EXPECT_TRUE(std::holds_alternative<Inventory>(r->body));
}

TEST(EnumToleranceTest, UnknownValueInNamesWhatARequestCannotCarry) {
  auto req = decode_request(slurp(BASIL_TEST_DATA "/basil/1.3/reserve.request.xml"));
  ASSERT_TRUE(req);
  EXPECT_EQ(unknown_value_in(*req), std::nullopt);
  std::get<ReserveRequest>(req->body).params.at(0).memory.at(0).type = MemoryType::kUnknown;
  EXPECT_EQ(unknown_value_in(*req), "MemoryParam@type");
  auto sw = decode_request(slurp(BASIL_TEST_DATA "/basil/1.3/switch.request.xml"));
  ASSERT_TRUE(sw);
  EXPECT_EQ(unknown_value_in(*sw), std::nullopt);
  std::get<SwitchRequest>(sw->body).applications.at(0).action = SwitchAction::kUnknown;
  EXPECT_EQ(unknown_value_in(*sw), "Application@action");
  EXPECT_EQ(parse_known_enum<MemoryType>("UNKNOWN"), std::nullopt);
  EXPECT_EQ(parse_known_enum<MemoryType>("HUGEPAGE"), MemoryType::kHugepage);
  EXPECT_EQ(parse_enum<MemoryType>("UNKNOWN"), MemoryType::kUnknown);
}

}  // namespace
}  // namespace basil
