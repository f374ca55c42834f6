// When an answer may be passed on before apbasil has exited (the gateway's
// early D frame): only once it is one whole BASIL response.
#include <gtest/gtest.h>

#include <string>

#include "basild/core/apbasil_output.h"

namespace basild {
namespace {

const std::string kHead =
    "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\">\n"
    " <ResponseData status=\"SUCCESS\" method=\"RELEASE\">\n";
const std::string kTail = "  <Released reservation_id=\"12\" claims=\"0\"/>\n </ResponseData>\n</BasilResponse>\n";

TEST(WholeAnswerTest, AResponseWhoseRootHasClosedIsWholeFailuresIncluded) {
  EXPECT_TRUE(is_whole_answer(kHead + kTail));
  EXPECT_TRUE(is_whole_answer(
      "<?xml version=\"1.0\"?><BasilResponse protocol=\"1.3\"><ResponseData status=\"FAILURE\" method=\"RELEASE\" "
      "error_class=\"PERMANENT\" error_source=\"BACKEND\"><Message severity=\"ERROR\">ALPS error: apsched: No entry "
      "for resId 12</Message></ResponseData></BasilResponse>\n\n"));
}

TEST(WholeAnswerTest, AFirstPieceEndingInATagIsNotWhole) {
  EXPECT_FALSE(is_whole_answer(kHead));
  EXPECT_FALSE(is_whole_answer(kHead + "  <Released reservation_id=\"12\" claims=\"0\"/>\n </ResponseData>\n"));
}

TEST(WholeAnswerTest, SomethingElseThanOneBasilResponseIsNotWhole) {
  EXPECT_FALSE(is_whole_answer(""));
  EXPECT_FALSE(is_whole_answer("apbasil: cannot connect to apsched\n"));
  EXPECT_FALSE(is_whole_answer(kHead + kTail + "<BasilResponse/>"));  // a second document after it
  EXPECT_FALSE(is_whole_answer("<?xml version=\"1.0\"?><BasilRequest protocol=\"1.3\" method=\"RELEASE\" "
                               "reservation_id=\"12\"/>"));  // a request, not a response
  EXPECT_FALSE(is_whole_answer("<a><b></a>"));
}

}  // namespace
}  // namespace basild
