// The XmlWriter: writes the markup of the encoder's documents straight into
// one std::string, with libxml2's escaping for values, and checks that every
// string from the model is text XML can hold. Private to basil_proto; the
// encoders (encode_request.cc, encode_response.cc, encode_inventory.cc) are
// its only users.
//
// Why not xmlTextWriter: it gave exactly this format, but its per-call cost
// (a list node and a copied name per element, three calls and a buffer
// round trip per attribute, small xmlOutputBufferWrite calls) made a
// 2256-node 1.3 INVENTORY (11.7 MB) take longer to encode than to decode,
// and the emulator answers that query as a whole process. XmlWriter writes
// into one std::string and gives the same bytes (tests/basil_proto/
// encode_escaping_test.cc compares it with xmlTextWriter character by
// character; the golden files compare whole documents):
// - `<?xml version="1.0"?>` and a newline first; one newline at the end.
// - One element per line, indented one space per depth ("\n" plus the
//   spaces before each start tag below the root and before the end tag of an
//   element with children); text-only elements on one line:
//   `<NodeParam>1-5</NodeParam>`.
// - Empty elements are self-closing.
// - Element and attribute names are literals of this file. The writer keeps
//   the stack of open elements, so tags always balance; finish() refuses a
//   document with an element left open.
// - Attribute values: printable ASCII other than `"` `&` `<` `>` is written
//   as it is (numbers, enum names, most names); any other value goes through
//   xmlAttrSerializeTxtContent, the function xmlTextWriterWriteAttribute
//   uses, which writes `"` `&` `<` `>` TAB CR LF as references (&quot; &amp;
//   &lt; &gt; &#9; &#13; &#10;) and, with no document encoding, every
//   non-ASCII character as a hexadecimal character reference (`é` ->
//   `&#xE9;`): valid XML that decodes to the same text, only longer.
// - Text content: the same fast path, else xmlEncodeSpecialChars (what
//   xmlTextWriterWriteString uses), which escapes `"` `&` `<` `>` and CR but
//   leaves TAB and LF literal; the encoder writes those two itself as &#9;
//   and &#10; so that every value keeps to one line and round-trips exactly.
//   Non-ASCII text stays UTF-8.
//
// Every string from the model is checked before it is written: strict UTF-8
// (no overlong forms, no surrogates, nothing above U+10FFFF; xmlCheckUTF8
// alone accepts all three) made of XML 1.0 characters (no control character
// other than TAB, CR, LF; no U+FFFE/U+FFFF). Anything else is kInvalidText and
// no document is returned.
#pragma once

#include <libxml/tree.h>
#include <libxml/xmlmemory.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "basil_proto/encode_stream.h"
#include "basil_proto/status.h"

namespace basil::encode_detail {

// kInvalidText naming the element and attribute ("Reservation@user_name", or
// "Message text" for a null attribute) when `value` cannot be written, else ok.
Status check_text(std::string_view value, const char* element, const char* attribute);

// True for a byte that libxml2's escaping leaves as it is in an attribute
// value and in text: printable ASCII other than `"` `&` `<` `>`. A value made
// only of these is written as it is; any other value goes through libxml2.
inline constexpr std::array<bool, 256> kVerbatim = [] {
  std::array<bool, 256> t{};
  for (unsigned c = 0x20; c < 0x7F; ++c) t[c] = true;
  for (char c : {'"', '&', '<', '>'}) t[static_cast<unsigned char>(c)] = false;
  return t;
}();

inline bool verbatim(std::string_view s) {
  for (char c : s)
    if (!kVerbatim[static_cast<unsigned char>(c)]) return false;
  return true;
}

struct XmlBufferFree {
  void operator()(xmlBuffer* b) const { xmlBufferFree(b); }
};
struct XmlCharFree {
  void operator()(xmlChar* p) const { xmlFree(p); }
};

// Writes the document straight into a std::string. Element names are
// literals of this file; every value from the model is written either as it
// is (verbatim() above: nothing libxml2 would change) or through libxml2's
// own serialisation: attribute values through xmlAttrSerializeTxtContent,
// text through xmlEncodeSpecialChars, the two functions xmlTextWriter calls
// for them. libxml2 failures are remembered and reported once by finish().
// The sink must outlive the writer.
//
// Streamed (a `pieces` function given): the string is a buffer of about
// `piece_bytes`; each time it is full, what it holds goes to `pieces` and
// it is reused, and finish() hands over the rest. The bytes written are
// never changed afterwards, so a piece may end anywhere, even inside a tag.
// When `pieces` returns false nothing more is handed to it and finish()
// reports kTransport.
class XmlWriter {
 public:
  using Pieces = std::function<bool(std::string_view)>;

  explicit XmlWriter(std::string* sink, const Pieces* pieces = nullptr, std::size_t piece_bytes = 0)
      : out_(*sink), pieces_(pieces), scratch_(xmlBufferCreateSize(256)) {
    if (!scratch_) {
      failed_ = true;
      return;
    }
    if (pieces_ != nullptr) out_.resize(std::max<std::size_t>(piece_bytes, 4096));
    put("<?xml version=\"1.0\"?>\n");
  }

  bool failed() const { return failed_; }
  // Streamed: the bytes handed to `pieces` so far.
  std::size_t handed() const { return handed_; }

  void start(std::string_view name) {
    if (failed_) return;
    if (depth_ >= kMaxDepth) {
      failed_ = true;
      return;
    }
    if (depth_ > 0) {
      close_start_tag();
      has_children_[depth_ - 1] = true;
      newline_and_indent(depth_);
    }
    names_[depth_] = name;
    has_children_[depth_] = false;
    ++depth_;
    put('<');
    put(name);
    tag_open_ = true;
  }

  void end() {
    if (failed_ || depth_ == 0) {
      failed_ = true;
      return;
    }
    --depth_;
    if (tag_open_) {  // nothing inside: self-closing
      put("/>");
      tag_open_ = false;
      return;
    }
    if (has_children_[depth_]) newline_and_indent(depth_);
    put("</");
    put(names_[depth_]);
    put('>');
  }

  // A literal value.
  void attr(std::string_view name, const char* value) { write_attr(name, value); }

  void attr(std::string_view name, std::uint64_t value) {
    if (!open_attr(name)) return;
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, value);
    put(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
    put('"');
  }

  // An enum name from to_string(), which gives "" for a value outside the
  // enum; that is refused.
  void attr(std::string_view name, std::string_view value) {
    if (value.empty()) {
      if (bad_enum_.empty()) bad_enum_ = name;
      failed_ = true;
      return;
    }
    write_attr(name, value);
  }

  // A string from the model: checked, then written.
  Status attr_text(const char* element, const char* name, const std::string& value) {
    Status s = check_text(value, element, name);
    if (s.is_ok()) write_attr(name, value);
    return s;
  }

  // Text content from the model: checked, then written with TAB and LF as
  // character references. Nothing is written for an empty string, so the
  // element stays self-closing.
  Status text(const char* element, const std::string& value) {
    Status s = check_text(value, element, nullptr);
    if (s.is_ok()) write_text(value);
    return s;
  }

  // Text known to be valid (NID lists). libxml2's text escaping leaves TAB
  // and LF literal; they are written as &#9; and &#10; so that every value
  // keeps to one line.
  void write_text(std::string_view value);

  // Ends the document with one newline, as xmlTextWriterEndDocument does.
  // Every element must have been ended.
  Status finish();

 private:
  // The documents of this project are at most 14 elements deep.
  static constexpr std::size_t kMaxDepth = 32;

  void close_start_tag() {
    if (tag_open_) {
      put('>');
      tag_open_ = false;
    }
  }

  // ` name="`; false (and failed) outside a start tag.
  bool open_attr(std::string_view name) {
    if (failed_) return false;
    if (!tag_open_) {
      failed_ = true;
      return false;
    }
    put(' ');
    put(name);
    put("=\"");
    return true;
  }

  void write_attr(std::string_view name, std::string_view value) {
    if (!open_attr(name)) return;
    if (verbatim(value)) {
      put(value);
    } else {
      put_escaped_attr(value);
    }
    put('"');
  }

  // `"` `&` `<` `>` TAB CR LF as references, and (no document, so no
  // encoding) every non-ASCII character as &#xHEX;.
  void put_escaped_attr(std::string_view value);

  // "\n" and `depth` spaces.
  void newline_and_indent(std::size_t depth) {
    static constexpr char kIndent[] = "\n                                ";
    static_assert(sizeof kIndent >= kMaxDepth + 2);
    put(std::string_view(kIndent, depth + 1));
  }

  // The document is written into out_[0, len_). out_ is made longer 64 KB
  // ahead of the writing (the zero fill stays in cache), within the capacity
  // the caller reserved, then by doubling; finish() cuts it to len_.
  void put(std::string_view s) {
    if (s.empty()) return;
    if (out_.size() - len_ < s.size()) grow(s.size());
    std::memcpy(out_.data() + len_, s.data(), s.size());
    len_ += s.size();
  }
  void put(char c) {
    if (len_ == out_.size()) grow(1);
    out_[len_++] = c;
  }
  void grow(std::size_t n) {
    if (pieces_ != nullptr && len_ > 0) {
      hand_over();
      if (out_.size() >= n) return;
    }
    static constexpr std::size_t kAhead = 64 * 1024;
    const std::size_t need = len_ + n;
    out_.resize(need + kAhead <= out_.capacity() ? need + kAhead : std::max(out_.size() * 2, need + kAhead));
  }

  // Streamed: out_[0, len_) to `pieces` (unless it refused a piece before).
  void hand_over() {
    if (!pieces_refused_ && !(*pieces_)(std::string_view(out_.data(), len_))) pieces_refused_ = true;
    if (!pieces_refused_) handed_ += len_;
    len_ = 0;
  }

  std::string& out_;
  std::size_t len_ = 0;
  const Pieces* pieces_ = nullptr;
  bool pieces_refused_ = false;
  std::size_t handed_ = 0;
  std::unique_ptr<xmlBuffer, XmlBufferFree> scratch_;  // libxml2's escaped attribute value
  bool failed_ = false;
  bool tag_open_ = false;  // a start tag is written up to its attributes
  std::string_view bad_enum_;  // the first attribute given an out-of-range enum
  std::size_t depth_ = 0;
  std::array<std::string_view, kMaxDepth> names_{};
  std::array<bool, kMaxDepth> has_children_{};
};

// Runs `body(writer)` with a streamed writer: the document goes to `pieces`
// as it is written. Returns the bytes handed over and the first error.
template <typename Body>
StreamedDocument write_streamed(const XmlWriter::Pieces& pieces, std::size_t piece_bytes, Body&& body) {
  StreamedDocument d;
  try {
    std::string buffer;
    XmlWriter w(&buffer, &pieces, piece_bytes);
    if (w.failed()) {
      d.status = Status(Code::kInternal, "cannot create the libxml2 escaping buffer");
    } else if (Status s = body(w); !s.is_ok()) {
      d.status = std::move(s);
    } else {
      d.status = w.finish();
    }
    d.written = w.handed();
  } catch (const std::bad_alloc&) {
    d.status = Status(Code::kInternal, "out of memory while encoding");
  } catch (...) {
    d.status = Status(Code::kInternal, "unexpected exception while encoding");
  }
  return d;
}

// Runs `body(writer)` and returns the document, or the first error. The
// writer is gone (and has flushed) before the string is handed back.
template <typename Body>
Result<std::string> write_document(std::size_t size_hint, Body&& body) {
  try {
    std::string out;
    out.reserve(size_hint);
    {
      XmlWriter w(&out);
      if (w.failed()) return Status(Code::kInternal, "cannot create the libxml2 escaping buffer");
      if (Status s = body(w); !s.is_ok()) return s;
      if (Status s = w.finish(); !s.is_ok()) return s;
    }
    return Result<std::string>(std::move(out));
  } catch (const std::bad_alloc&) {
    return Status(Code::kInternal, "out of memory while encoding");
  } catch (...) {
    return Status(Code::kInternal, "unexpected exception while encoding");
  }
}

}  // namespace basil::encode_detail
