// A run's stderr as diagnostics (and so the log) show it: capped, on one
// line, control characters escaped.
#include <gtest/gtest.h>

#include <string>

#include "basild/core/apbasil_output.h"

namespace basild {
namespace {

TEST(StderrExcerptTest, ShortTextIsShownWholeWithoutItsTrailingNewline) {
  EXPECT_EQ(stderr_excerpt("apbasil: no ALPS\n", 17), "apbasil: no ALPS");
  EXPECT_EQ(stderr_excerpt("", 0), "");
}

TEST(StderrExcerptTest, NewlinesAndControlCharactersAreEscapedOntoOneLine) {
  const std::string text = "line 1\nline 2\r\n\ttab \x1b[31mred\x7f back\\slash\n";
  EXPECT_EQ(stderr_excerpt(text, text.size()),
            "line 1\\nline 2\\r\\n\\ttab \\x1b[31mred\\x7f back\\\\slash");
}

TEST(StderrExcerptTest, LongTextIsCappedSayingHowMuchMoreThereWas) {
  const std::string text(64 * 1024, 'e');
  const std::string shown = stderr_excerpt(std::string_view(text).substr(0, 4096), text.size());
  EXPECT_EQ(shown, std::string(4096, 'e') + " ... (61440 more bytes)");
  // The cap counts escaped bytes: 2048 newlines take the whole of it.
  const std::string lines(4096, '\n');
  EXPECT_EQ(stderr_excerpt(lines + "x", lines.size() + 1, 4096).size(), 4096 + std::string(" ... (2049 more bytes)").size());
}

TEST(StderrExcerptTest, Utf8IsKeptWholeAndNeverCutAndBadBytesAreEscaped) {
  EXPECT_EQ(stderr_excerpt("caf\xc3\xa9 \xe2\x82\xac", 9), "caf\xc3\xa9 \xe2\x82\xac");
  EXPECT_EQ(stderr_excerpt("ab\xe2\x82\xac", 5, 3), "ab ... (3 more bytes)");
  EXPECT_EQ(stderr_excerpt("\xff\xc3(", 3), "\\xff\\xc3(");
  // Cut mid-sequence by the transport's own limit: escaped, not left half.
  EXPECT_EQ(stderr_excerpt("ab\xe2\x82", 10), "ab\\xe2\\x82 ... (6 more bytes)");
}

}  // namespace
}  // namespace basild
