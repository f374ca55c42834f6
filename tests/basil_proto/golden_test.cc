// Golden files: the encoder writes every file in tests/data/basil/<dialect>/
// byte for byte from the model in golden_models.h (the decode-then-encode
// round trip is in golden_roundtrip_test.cc).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "basil_proto/codec.h"
#include "tests/basil_proto/golden_models.h"

namespace basil {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Result<std::string> encode(const golden::Case& c) {
  if (c.is_request()) return encode_request(std::get<Request>(c.document));
  return encode_response(std::get<Response>(c.document));
}

TEST(GoldenTest, EncoderWritesEveryGoldenFileByteForByte) {
  const auto cases = golden::all_cases();
  ASSERT_GT(cases.size(), 60u);
  for (const golden::Case& c : cases) {
    SCOPED_TRACE(c.path());
    ASSERT_TRUE(std::filesystem::exists(c.path()));
    auto out = encode(c);
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    EXPECT_EQ(*out, read_file(c.path()));
  }
}

TEST(GoldenTest, EveryGoldenFileHasAModel) {
  std::set<std::string> modelled;
  for (const golden::Case& c : golden::all_cases()) modelled.insert(c.path());
  std::set<std::string> on_disk;
  for (Dialect d : kAllDialects) {
    const std::string dir = std::string(BASIL_TEST_DATA) + "/basil/" + std::string(dialect_id(d));
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".xml") on_disk.insert(dir + "/" + e.path().filename().string());
  }
  std::vector<std::string> orphans;
  std::set_difference(on_disk.begin(), on_disk.end(), modelled.begin(), modelled.end(),
                      std::back_inserter(orphans));
  EXPECT_TRUE(orphans.empty()) << "golden file without a model: " << orphans.front();
}

TEST(GoldenTest, EveryDialectHasTheCoreMessages) {
  for (Dialect d : kAllDialects) {
    const std::string dir = std::string(BASIL_TEST_DATA) + "/basil/" + std::string(dialect_id(d)) + "/";
    for (const char* name :
         {"query_engine.request.xml", "query_engine.response.xml", "query_inventory.request.xml",
          "query_inventory.response.xml", "reserve.request.xml", "reserve.response.xml",
          "confirm.request.xml", "confirm.response.xml", "release.request.xml",
          "release.response.xml", "release_gone.response.xml", "confirm_unknown.response.xml",
          "version_mismatch.response.xml"}) {
      EXPECT_TRUE(std::filesystem::exists(dir + name)) << dir + name;
    }
  }
}

}  // namespace
}  // namespace basil
