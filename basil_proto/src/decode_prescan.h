// The decoder's look at the bytes before libxml2 reads them: it counts
// each start tag's attributes. libxml2 (2.9) compares every attribute of a
// start tag with every other one (its duplicate check) before the SAX
// callback hears of the element, so a start tag of 95,000 attributes costs
// seconds however soon the callback would refuse it. The scan is linear and
// keeps its state between pieces, so a tag cut anywhere is still counted.
//
// It knows just enough XML to tell a start tag from everything else: text,
// end tags, comments, CDATA sections, processing instructions and
// declarations are skipped; in a start tag, each `=` outside a quoted value
// is one attribute (a well-formed start tag has exactly one per attribute).
// UTF-16 and UCS-4 documents (told by their first bytes, as libxml2 tells
// them) are read in code units, so a byte of a wide character is never
// taken for markup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace basil::decode_detail {

class AttributeScan {
 public:
  explicit AttributeScan(std::size_t max_attributes) : max_(max_attributes) {}

  struct Excess {
    std::string element;  // the start tag's name (its first 64 bytes)
    std::size_t offset = 0;  // bytes into the document, just past the '=' over the limit
  };

  // Reads the next piece of the document. The first start tag with more
  // than max_attributes attributes, once it is seen; the scan stops there.
  std::optional<Excess> feed(std::string_view bytes);

 private:
  enum class State : std::uint8_t {
    kText,      // outside markup
    kOpen,      // after '<'
    kBang,      // after "<!": a comment, a CDATA section or a declaration
    kName,      // a start tag's name
    kTag,       // a start tag's attributes
    kQuoted,    // a quoted attribute value
    kComment,   // until "-->"
    kCData,     // until "]]>"
    kPi,        // until "?>"
    kSkipTag,   // an end tag or a declaration: until '>'
  };

  void scan(std::string_view bytes);
  std::size_t scan_bytes(std::string_view bytes);
  const char* exact_bytes(const char* p, const char* end);
  void unit(std::uint32_t c);
  void unit_of_name(std::uint32_t c);
  void unit_of_tag(std::uint32_t c);
  void unit_of_bang(std::uint32_t c);
  bool detect(std::string_view bytes, std::size_t& used);

  std::size_t max_;
  State state_ = State::kText;
  std::uint32_t quote_ = 0;
  std::size_t count_ = 0;    // attributes of the current start tag
  unsigned run_ = 0;         // '-', ']' or '?' just before (comment, CDATA, PI ends)
  std::string bang_;         // what follows "<!" until it says what it is
  std::string name_;
  std::size_t fed_ = 0;  // bytes scanned
  std::size_t at_ = 0;   // Excess::offset
  bool over_ = false;
  // Code units: 1 byte (UTF-8, ASCII, ISO-8859-1), 2 or 4; read from the
  // document's first bytes, kept meanwhile in `head_`.
  unsigned width_ = 0;
  bool big_endian_ = false;
  std::string head_;
  std::string partial_;  // the bytes of a code unit cut by a piece's end
};

}  // namespace basil::decode_detail
