// The encoder: model -> BASIL XML in the wire format of DECISIONS.md
// section 4. Values are escaped by libxml2; the markup around them is
// written by XmlWriter below.
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
//
// Dialect rules (kNotInDialect) are checked while writing; a refusal
// discards what was written. Nothing here throws out of the two entry points.

#include <libxml/entities.h>
#include <libxml/tree.h>
#include <libxml/xmlmemory.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "basil_proto/codec.h"
#include "basil_proto/dialect.h"
#include "basil_proto/model.h"
#include "basil_proto/nidlist.h"
#include "basil_proto/status.h"

namespace basil {
namespace {

#define BASIL_RETURN_IF_ERROR(expr)                   \
  do {                                                \
    if (::basil::Status st_ = (expr); !st_.is_ok()) { \
      return st_;                                     \
    }                                                 \
  } while (false)

const xmlChar* X(const char* s) { return reinterpret_cast<const xmlChar*>(s); }

// ---------------------------------------------------------------- errors

// "<what> cannot be written in dialect 1.2 (<rule>)".
Status not_in_dialect(Dialect d, std::string_view what, std::string_view rule) {
  std::string m;
  m.reserve(what.size() + rule.size() + 48);
  m.append(what);
  m.append(" cannot be written in dialect ");
  m.append(dialect_id(d));
  if (!rule.empty()) {
    m.append(" (");
    m.append(rule);
    m.append(")");
  }
  return Status(Code::kNotInDialect, std::move(m));
}

Status refused(std::string message) { return Status(Code::kNotInDialect, std::move(message)); }

// ---------------------------------------------------------------- text check

// Offset of the first byte that does not start a valid UTF-8 sequence of an
// XML 1.0 Char (#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] |
// [#x10000-#x10FFFF]), or npos. *utf8_error tells a broken sequence from a
// well-formed but forbidden character.
std::size_t find_invalid_char(std::string_view s, bool* utf8_error) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  auto cont = [&](std::size_t k) { return i + k < n && (p[i + k] & 0xC0U) == 0x80U; };
  while (i < n) {
    const unsigned c = p[i];
    if (c < 0x80U) {
      if (c < 0x20U && c != 0x09U && c != 0x0AU && c != 0x0DU) {
        *utf8_error = false;
        return i;
      }
      ++i;
      continue;
    }
    *utf8_error = true;
    if (c >= 0xC2U && c <= 0xDFU) {
      if (!cont(1)) return i;
      i += 2;
    } else if (c >= 0xE0U && c <= 0xEFU) {
      if (!cont(1) || !cont(2)) return i;
      const unsigned c1 = p[i + 1];
      if (c == 0xE0U && c1 < 0xA0U) return i;  // overlong
      if (c == 0xEDU && c1 > 0x9FU) return i;  // UTF-16 surrogate
      if (c == 0xEFU && c1 == 0xBFU && (p[i + 2] == 0xBEU || p[i + 2] == 0xBFU)) {
        *utf8_error = false;  // U+FFFE, U+FFFF: not XML characters
        return i;
      }
      i += 3;
    } else if (c >= 0xF0U && c <= 0xF4U) {
      if (!cont(1) || !cont(2) || !cont(3)) return i;
      const unsigned c1 = p[i + 1];
      if (c == 0xF0U && c1 < 0x90U) return i;  // overlong
      if (c == 0xF4U && c1 > 0x8FU) return i;  // above U+10FFFF
      i += 4;
    } else {
      return i;  // continuation byte, C0/C1 overlong lead, F5..FF
    }
  }
  return std::string_view::npos;
}

// kInvalidText naming the element and attribute ("Reservation@user_name")
// when `value` cannot be written, else ok.
Status check_text(std::string_view value, const char* element, const char* attribute) {
  bool utf8_error = false;
  const std::size_t at = find_invalid_char(value, &utf8_error);
  if (at == std::string_view::npos) return {};
  std::string m(element);
  if (attribute != nullptr) {
    m += '@';
    m += attribute;
  } else {
    m += " text";
  }
  m += utf8_error ? " is not valid UTF-8 (byte " : " holds a character XML 1.0 forbids (byte ";
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, at);
  m.append(buf, r.ptr);
  m += ')';
  return Status(Code::kInvalidText, std::move(m));
}

// ---------------------------------------------------------------- writer

// True for a byte that libxml2's escaping leaves as it is in an attribute
// value and in text: printable ASCII other than `"` `&` `<` `>`. A value made
// only of these is written as it is; any other value goes through libxml2.
constexpr std::array<bool, 256> kVerbatim = [] {
  std::array<bool, 256> t{};
  for (unsigned c = 0x20; c < 0x7F; ++c) t[c] = true;
  for (char c : {'"', '&', '<', '>'}) t[static_cast<unsigned char>(c)] = false;
  return t;
}();

bool verbatim(std::string_view s) {
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
class XmlWriter {
 public:
  explicit XmlWriter(std::string* sink) : out_(*sink), scratch_(xmlBufferCreateSize(256)) {
    if (!scratch_) {
      failed_ = true;
      return;
    }
    put("<?xml version=\"1.0\"?>\n");
  }

  bool failed() const { return failed_; }

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
    BASIL_RETURN_IF_ERROR(check_text(value, element, name));
    write_attr(name, value);
    return {};
  }

  // Text content from the model: checked, then written with TAB and LF as
  // character references. Nothing is written for an empty string, so the
  // element stays self-closing.
  Status text(const char* element, const std::string& value) {
    BASIL_RETURN_IF_ERROR(check_text(value, element, nullptr));
    write_text(value);
    return {};
  }

  // Text known to be valid (NID lists). libxml2's text escaping leaves TAB
  // and LF literal; they are written as &#9; and &#10; so that every value
  // keeps to one line.
  void write_text(std::string_view value) {
    if (failed_ || depth_ == 0 || value.empty()) return;
    close_start_tag();
    while (!value.empty() && !failed_) {
      const std::size_t special = value.find_first_of("\t\n");
      const std::string_view piece = value.substr(0, special);
      if (verbatim(piece)) {
        put(piece);
      } else {
        const std::string copy(piece);  // NUL-terminated for libxml2
        std::unique_ptr<xmlChar, XmlCharFree> escaped(xmlEncodeSpecialChars(nullptr, X(copy.c_str())));
        if (!escaped) {
          failed_ = true;
          return;
        }
        put(reinterpret_cast<const char*>(escaped.get()));
      }
      if (special == std::string_view::npos) break;
      put(value[special] == '\t' ? "&#9;" : "&#10;");
      value.remove_prefix(special + 1);
    }
  }

  // Ends the document with one newline, as xmlTextWriterEndDocument does.
  // Every element must have been ended.
  Status finish() {
    if (!bad_enum_.empty())
      return Status(Code::kInvalidValue,
                    "attribute " + std::string(bad_enum_) + " holds a value outside its enum");
    if (failed_) return Status(Code::kInternal, "libxml2 escaping failed (out of memory?)");
    if (depth_ != 0) return Status(Code::kInternal, "the encoder left an element open");
    put('\n');
    out_.resize(len_);
    return {};
  }

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
      // `"` `&` `<` `>` TAB CR LF as references, and (no document, so no
      // encoding) every non-ASCII character as &#xHEX;.
      const std::string copy(value);  // NUL-terminated for libxml2
      xmlBufferEmpty(scratch_.get());
      xmlAttrSerializeTxtContent(scratch_.get(), nullptr, nullptr, X(copy.c_str()));
      const int n = xmlBufferLength(scratch_.get());
      // Escaping never shortens a value: a shorter result is a failed append.
      if (n < 0 || static_cast<std::size_t>(n) < copy.size()) {
        failed_ = true;
        return;
      }
      put(std::string_view(reinterpret_cast<const char*>(xmlBufferContent(scratch_.get())), static_cast<std::size_t>(n)));
    }
    put('"');
  }

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
    static constexpr std::size_t kAhead = 64 * 1024;
    const std::size_t need = len_ + n;
    out_.resize(need + kAhead <= out_.capacity() ? need + kAhead : std::max(out_.size() * 2, need + kAhead));
  }

  std::string& out_;
  std::size_t len_ = 0;
  std::unique_ptr<xmlBuffer, XmlBufferFree> scratch_;  // libxml2's escaped attribute value
  bool failed_ = false;
  bool tag_open_ = false;  // a start tag is written up to its attributes
  std::string_view bad_enum_;  // the first attribute given an out-of-range enum
  std::size_t depth_ = 0;
  std::array<std::string_view, kMaxDepth> names_{};
  std::array<bool, kMaxDepth> has_children_{};
};

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
      BASIL_RETURN_IF_ERROR(body(w));
      BASIL_RETURN_IF_ERROR(w.finish());
    }
    return Result<std::string>(std::move(out));
  } catch (const std::bad_alloc&) {
    return Status(Code::kInternal, "out of memory while encoding");
  } catch (...) {
    return Status(Code::kInternal, "unexpected exception while encoding");
  }
}

// ---------------------------------------------------------------- requests

const char* query_type_name(QueryType t) {
  switch (t) {
    case QueryType::kEngine: return "ENGINE";
    case QueryType::kInventory: return "INVENTORY";
    case QueryType::kSummary: return "SUMMARY";
    case QueryType::kStatus: return "STATUS";
  }
  return "";
}

class RequestEncoder {
 public:
  RequestEncoder(XmlWriter& w, const Request& r) : w_(w), r_(r), d_(r.dialect) {}

  Status run() { return std::visit([this](const auto& body) { return write(body); }, r_.body); }

 private:
  // <BasilRequest protocol method [type]: the attributes every request has.
  Status open(const char* method, const char* type) {
    w_.start("BasilRequest");
    if (r_.protocol.empty()) {
      w_.attr("protocol", protocol_string(d_));
    } else {
      BASIL_RETURN_IF_ERROR(w_.attr_text("BasilRequest", "protocol", r_.protocol));
    }
    w_.attr("method", method);
    if (type != nullptr) w_.attr("type", type);
    return {};
  }

  Status query(QueryType t) { return open("QUERY", query_type_name(t)); }

  // pagg_id is admin_cookie in 1.0 and 1.1 (orig).
  const char* pagg_name() const {
    return at_least(d_, Dialect::k1_1plus) ? "pagg_id" : "admin_cookie";
  }

  Status write(const EngineQuery&) {
    BASIL_RETURN_IF_ERROR(query(QueryType::kEngine));
    w_.end();
    return {};
  }

  Status write(const InventoryQuery& q) {
    using Form = InventoryQuery::Form;
    if (q.form != Form::kFull && !at_least(d_, Dialect::k1_2))
      return not_in_dialect(d_,
                            q.form == Form::kNodesSince ? "INVENTORY request with NodeArray changecount"
                                                        : "INVENTORY request for reservations only",
                            "the request forms are used from 1.2");
    if (q.form != Form::kNodesSince && q.changecount != 0)
      return refused("InventoryQuery changecount is only written in the nodes-since form");
    BASIL_RETURN_IF_ERROR(query(QueryType::kInventory));
    if (q.form != Form::kFull) {
      w_.start("Inventory");
      if (q.form == Form::kNodesSince) {
        w_.start("NodeArray");
        w_.attr("changecount", q.changecount);
        w_.end();
      }
      w_.start("ReservationArray");
      w_.end();
      w_.end();
    }
    w_.end();
    return {};
  }

  Status write(const SummaryQuery&) {
    if (!at_least(d_, Dialect::k1_3))
      return not_in_dialect(d_, "QUERY SUMMARY", "1.3 onwards");
    BASIL_RETURN_IF_ERROR(query(QueryType::kSummary));
    w_.end();
    return {};
  }

  Status write(const StatusQuery& q) {
    if (!at_least(d_, Dialect::k1_2))
      return not_in_dialect(d_, "QUERY STATUS", "1.2 onwards");
    if (q.reservation_ids.empty() == q.application_ids.empty())
      return refused("QUERY STATUS names reservations or applications, one of the two "
                     "(PROTOCOL.md 1.5)");
    BASIL_RETURN_IF_ERROR(query(QueryType::kStatus));
    if (!q.reservation_ids.empty()) {
      w_.start("ReservationArray");
      for (std::uint64_t id : q.reservation_ids) {
        w_.start("Reservation");
        w_.attr("reservation_id", id);
        w_.end();
      }
      w_.end();
    }
    if (!q.application_ids.empty()) {
      w_.start("ApplicationArray");
      for (std::uint64_t id : q.application_ids) {
        w_.start("Application");
        w_.attr("application_id", id);
        w_.end();
      }
      w_.end();
    }
    w_.end();
    return {};
  }

  Status write(const ReserveRequest& q) {
    if (q.params.empty()) return refused("RESERVE needs at least one ReserveParam");
    if (q.batch_id && !at_least(d_, Dialect::k1_1))
      return not_in_dialect(d_, "ReserveParamArray@batch_id", "1.1 onwards");
    BASIL_RETURN_IF_ERROR(open("RESERVE", nullptr));
    w_.start("ReserveParamArray");
    BASIL_RETURN_IF_ERROR(w_.attr_text("ReserveParamArray", "user_name", q.user_name));
    if (q.batch_id)
      BASIL_RETURN_IF_ERROR(w_.attr_text("ReserveParamArray", "batch_id", *q.batch_id));
    if (q.account_name)
      BASIL_RETURN_IF_ERROR(w_.attr_text("ReserveParamArray", "account_name", *q.account_name));
    for (const ReserveParam& p : q.params) BASIL_RETURN_IF_ERROR(write_param(p));
    w_.end();
    w_.end();
    return {};
  }

  Status write_param(const ReserveParam& p) {
    if (p.nppcu && *p.nppcu > 0 && !at_least(d_, Dialect::k1_3))
      return not_in_dialect(d_, "ReserveParam@nppcu=" + std::to_string(*p.nppcu), "1.3 onwards");
    if ((p.reservation_mode || p.gpc_mode) && !at_least(d_, Dialect::k1_1plus))
      return not_in_dialect(
          d_, p.reservation_mode ? "ReserveParam@reservation_mode" : "ReserveParam@gpc_mode",
          "1.1+ onwards");
    if (p.oscpn && !at_least(d_, Dialect::k1_1plus))
      return not_in_dialect(d_, "ReserveParam@oscpn", "1.1+ onwards");
    // Torque sends p-state and p-governor from protocol 1.3 on (PROTOCOL.md 1.8).
    if ((p.p_state || p.p_governor) && !at_least(d_, Dialect::k1_3))
      return not_in_dialect(d_, p.p_state ? "ReserveParam@p-state" : "ReserveParam@p-governor",
                            "1.3 onwards");
    if (!p.accelerators.empty() && !at_least(d_, Dialect::k1_2))
      return not_in_dialect(d_, "AccelParam", "1.2 onwards");
    if (p.nodes.size() > 1)
      return refused("this project writes at most one NodeParam per ReserveParam (got " +
                     std::to_string(p.nodes.size()) + "; DECISIONS.md section 4)");
    if (p.nodes.size() == 1 && p.nodes.front().empty())
      return refused("NodeParam with an empty NID list");

    w_.start("ReserveParam");
    BASIL_RETURN_IF_ERROR(w_.attr_text("ReserveParam", "architecture", p.architecture));
    w_.attr("width", p.width);
    if (p.depth) w_.attr("depth", std::uint64_t{*p.depth});
    if (p.nppn) w_.attr("nppn", std::uint64_t{*p.nppn});
    if (p.npps) w_.attr("npps", std::uint64_t{*p.npps});
    if (p.nspn) w_.attr("nspn", std::uint64_t{*p.nspn});
    // nppcu 0 (ALPS's default) is not written before 1.3, where it does not exist.
    if (p.nppcu && at_least(d_, Dialect::k1_3)) w_.attr("nppcu", std::uint64_t{*p.nppcu});
    if (p.segments) BASIL_RETURN_IF_ERROR(w_.attr_text("ReserveParam", "segments", *p.segments));
    if (p.reservation_mode) w_.attr("reservation_mode", to_string(*p.reservation_mode));
    if (p.gpc_mode) w_.attr("gpc_mode", to_string(*p.gpc_mode));
    if (p.oscpn) w_.attr("oscpn", std::uint64_t{*p.oscpn});
    if (p.p_state) w_.attr("p-state", *p.p_state);
    if (p.p_governor) w_.attr("p-governor", to_string(*p.p_governor));

    if (!p.memory.empty()) {
      w_.start("MemoryParamArray");
      for (const MemoryParam& m : p.memory) {
        w_.start("MemoryParam");
        w_.attr("type", to_string(m.type));
        w_.attr("size_mb", m.size_mb);
        w_.end();
      }
      w_.end();
    }
    if (!p.labels.empty()) {
      w_.start("LabelParamArray");
      for (const LabelParam& l : p.labels) {
        w_.start("LabelParam");
        BASIL_RETURN_IF_ERROR(w_.attr_text("LabelParam", "name", l.name));
        w_.attr("type", to_string(l.type));
        w_.attr("disposition", to_string(l.disposition));
        w_.end();
      }
      w_.end();
    }
    if (!p.nodes.empty()) {
      w_.start("NodeParamArray");
      w_.start("NodeParam");
      w_.write_text(p.nodes.front().format());
      w_.end();
      w_.end();
    }
    if (!p.accelerators.empty()) {
      w_.start("AccelParamArray");
      for (const AccelParam& a : p.accelerators) {
        w_.start("AccelParam");
        BASIL_RETURN_IF_ERROR(w_.attr_text("AccelParam", "type", a.type));
        if (a.family) BASIL_RETURN_IF_ERROR(w_.attr_text("AccelParam", "family", *a.family));
        if (a.memory_mb) w_.attr("memory_mb", *a.memory_mb);
        w_.end();
      }
      w_.end();
    }
    w_.end();
    return {};
  }

  Status write(const ConfirmRequest& q) {
    if (q.job_name && d_ != Dialect::k1_0)
      return not_in_dialect(d_, "CONFIRM job_name", "1.0 only");
    BASIL_RETURN_IF_ERROR(open("CONFIRM", nullptr));
    w_.attr("reservation_id", q.reservation_id);
    w_.attr(pagg_name(), q.pagg_id);
    if (q.job_name) BASIL_RETURN_IF_ERROR(w_.attr_text("BasilRequest", "job_name", *q.job_name));
    w_.end();
    return {};
  }

  Status write(const ReleaseRequest& q) {
    BASIL_RETURN_IF_ERROR(open("RELEASE", nullptr));
    w_.attr("reservation_id", q.reservation_id);
    if (q.pagg_id) w_.attr(pagg_name(), *q.pagg_id);
    w_.end();
    return {};
  }

  Status write(const SwitchRequest& q) {
    if (!at_least(d_, Dialect::k1_2)) return not_in_dialect(d_, "SWITCH", "1.2 onwards");
    if (q.reservations.empty() == q.applications.empty())
      return refused("SWITCH names reservations or applications, one of the two (PROTOCOL.md 1.11)");
    BASIL_RETURN_IF_ERROR(open("SWITCH", nullptr));
    if (!q.reservations.empty()) {
      w_.start("ReservationArray");
      for (const SwitchItem& i : q.reservations) {
        w_.start("Reservation");
        w_.attr("reservation_id", i.id);
        w_.attr("action", to_string(i.action));
        w_.end();
      }
      w_.end();
    }
    if (!q.applications.empty()) {
      w_.start("ApplicationArray");
      for (const SwitchItem& i : q.applications) {
        w_.start("Application");
        w_.attr("application_id", i.id);
        w_.attr("action", to_string(i.action));
        w_.end();
      }
      w_.end();
    }
    w_.end();
    return {};
  }

  XmlWriter& w_;
  const Request& r_;
  Dialect d_;
};

// ---------------------------------------------------------------- responses

Method method_of(const ResponseBody& body) {
  struct V {
    Method operator()(const std::monostate&) const { return Method::kUndefined; }
    Method operator()(const Reserved&) const { return Method::kReserve; }
    Method operator()(const Confirmed&) const { return Method::kConfirm; }
    Method operator()(const Released&) const { return Method::kRelease; }
    Method operator()(const Switched&) const { return Method::kSwitch; }
    Method operator()(const EngineInfo&) const { return Method::kQuery; }
    Method operator()(const Inventory&) const { return Method::kQuery; }
    Method operator()(const Summary&) const { return Method::kQuery; }
    Method operator()(const StatusInfo&) const { return Method::kQuery; }
  };
  return std::visit(V{}, body);
}

const char* body_name(const ResponseBody& body) {
  static constexpr const char* kNames[] = {"nothing", "Engine",    "Inventory", "Summary", "STATUS answer",
                                           "Reserved", "Confirmed", "Released", "SWITCH answer"};
  static_assert(std::variant_size_v<ResponseBody> == std::size(kNames));
  return kNames[body.index()];
}

class ResponseEncoder {
 public:
  ResponseEncoder(XmlWriter& w, const Response& r) : w_(w), r_(r), d_(r.dialect) {}

  Status run() {
    // An UNKNOWN status (decoded from a value outside the list) is no SUCCESS.
    const bool failure = r_.status != ResponseStatus::kSuccess;
    if (r_.type)
      return not_in_dialect(d_, "ResponseData@type", "a 1.4/1.7 attribute: decoded, never written");
    if (!failure && (r_.error_class || r_.error_source))
      return refused("error_class/error_source are only written on a FAILURE");
    if (!failure && r_.protocol.empty())
      return refused("BasilResponse@protocol may only be empty on a FAILURE");
    if (r_.status == ResponseStatus::kFailure && r_.body.index() != 0)
      return refused(std::string("a FAILURE carries no ") + body_name(r_.body));
    if (r_.body.index() != 0 && method_of(r_.body) != r_.method)
      return refused(std::string(body_name(r_.body)) + " does not answer method " +
                     std::string(to_string(r_.method)));

    w_.start("BasilResponse");
    BASIL_RETURN_IF_ERROR(w_.attr_text("BasilResponse", "protocol", r_.protocol));
    w_.start("ResponseData");
    w_.attr("status", to_string(r_.status));
    w_.attr("method", to_string(r_.method));
    if (r_.error_class) w_.attr("error_class", to_string(*r_.error_class));
    if (r_.error_source) w_.attr("error_source", to_string(*r_.error_source));
    for (const Message& m : r_.messages) {
      w_.start("Message");
      w_.attr("severity", to_string(m.severity));
      BASIL_RETURN_IF_ERROR(w_.text("Message", m.text));
      w_.end();
    }
    BASIL_RETURN_IF_ERROR(std::visit([this](const auto& body) { return write(body); }, r_.body));
    w_.end();
    w_.end();
    return {};
  }

 private:
  bool since(Dialect floor) const { return at_least(d_, floor); }

  Status write(const std::monostate&) { return {}; }

  Status write(const EngineInfo& e) {
    w_.start("Engine");
    BASIL_RETURN_IF_ERROR(w_.attr_text("Engine", "name", e.name));
    BASIL_RETURN_IF_ERROR(w_.attr_text("Engine", "version", e.version));
    if (!e.basil_support.empty()) {
      std::string list;
      for (const std::string& v : e.basil_support) {
        if (v.empty() || v.find(',') != std::string::npos)
          return refused("Engine@basil_support item '" + v + "' is empty or holds a comma");
        if (!list.empty()) list += ',';
        list += v;
      }
      BASIL_RETURN_IF_ERROR(w_.attr_text("Engine", "basil_support", list));
    }
    w_.end();
    return {};
  }

  // ------------------------------------------------------------ inventory

  Status write(const Inventory& inv) {
    if (inv.cpcu)
      return not_in_dialect(d_, "Inventory@cpcu", "a 1.4/1.7 attribute: decoded, never written");
    if ((inv.mpp_host || inv.timestamp) && !since(Dialect::k1_1plus))
      return not_in_dialect(d_, inv.mpp_host ? "Inventory@mpp_host" : "Inventory@timestamp",
                            "1.1+ onwards");
    if (inv.changecount && !since(Dialect::k1_2))
      return not_in_dialect(d_, "NodeArray@changecount", "1.2 onwards");
    if (inv.schedchangecount && !since(Dialect::k1_3))
      return not_in_dialect(d_, "NodeArray@schedchangecount", "1.3 onwards");
    if (!inv.has_node_array && (!inv.nodes.empty() || inv.changecount || inv.schedchangecount))
      return refused("Inventory without a NodeArray holds node data");
    if (!inv.has_reservation_array && !inv.reservations.empty())
      return refused("Inventory without a ReservationArray holds reservations");

    w_.start("Inventory");
    if (inv.mpp_host) BASIL_RETURN_IF_ERROR(w_.attr_text("Inventory", "mpp_host", *inv.mpp_host));
    if (inv.timestamp) w_.attr("timestamp", *inv.timestamp);
    if (inv.has_node_array) {
      w_.start("NodeArray");
      if (inv.changecount) w_.attr("changecount", *inv.changecount);
      if (inv.schedchangecount) w_.attr("schedchangecount", *inv.schedchangecount);
      for (const Node& n : inv.nodes) BASIL_RETURN_IF_ERROR(write_node(n));
      w_.end();
    }
    if (inv.has_reservation_array) {
      w_.start("ReservationArray");
      for (const Reservation& r : inv.reservations) BASIL_RETURN_IF_ERROR(write_reservation(r));
      w_.end();
    }
    w_.end();
    return {};
  }

  Status node_refused(const Node& n, const char* what, const char* rule) {
    return not_in_dialect(d_, "Node " + std::to_string(n.node_id) + ": " + what, rule);
  }

  Status write_node(const Node& n) {
    // The layout must be the dialect's.
    if (d_ == Dialect::k1_0) {
      if (!n.segments.empty()) return node_refused(n, "SegmentArray", "1.0 has processors on Node");
      if (!n.sockets.empty()) return node_refused(n, "SocketArray", "1.3 only");
    } else if (d_ == Dialect::k1_3) {
      if (!n.processors.empty()) return node_refused(n, "ProcessorArray under Node", "1.0 only");
      if (!n.labels.empty()) return node_refused(n, "LabelArray under Node", "1.0 only");
      if (!n.segments.empty())
        return node_refused(n, "SegmentArray under Node", "1.3 puts segments under sockets");
    } else {
      if (!n.processors.empty()) return node_refused(n, "ProcessorArray under Node", "1.0 only");
      if (!n.memory.empty()) return node_refused(n, "MemoryArray under Node", "1.0 only");
      if (!n.labels.empty()) return node_refused(n, "LabelArray under Node", "1.0 only");
      if (!n.sockets.empty()) return node_refused(n, "SocketArray", "1.3 only");
    }
    if (!n.accelerators.empty() && !since(Dialect::k1_2))
      return node_refused(n, "AcceleratorArray", "1.2 onwards");
    if (n.router_id && d_ != Dialect::k1_1plus && d_ != Dialect::k1_2)
      return node_refused(n, "router_id", "1.1+ and 1.2 only");

    w_.start("Node");
    w_.attr("node_id", std::uint64_t{n.node_id});
    BASIL_RETURN_IF_ERROR(w_.attr_text("Node", "name", n.name));
    w_.attr("architecture", to_string(n.architecture));
    w_.attr("role", to_string(n.role));
    w_.attr("state", to_string(n.state));
    if (n.router_id) w_.attr("router_id", std::uint64_t{*n.router_id});

    if (d_ == Dialect::k1_0) {
      write_processors(n.processors);
      write_memory(n.memory);
      BASIL_RETURN_IF_ERROR(write_labels(n.labels));
    } else if (d_ == Dialect::k1_3) {
      w_.start("SocketArray");
      for (const Socket& s : n.sockets) {
        w_.start("Socket");
        w_.attr("ordinal", std::uint64_t{s.ordinal});
        w_.attr("architecture", to_string(s.architecture));
        w_.attr("clock_mhz", std::uint64_t{s.clock_mhz});
        BASIL_RETURN_IF_ERROR(write_segments(n, s.segments));
        w_.end();
      }
      w_.end();
      // CLE 5.2 before UP03 put MemoryArray directly under Node.
      if (!n.memory.empty()) write_memory(n.memory);
    } else {
      BASIL_RETURN_IF_ERROR(write_segments(n, n.segments));
    }
    if (!n.accelerators.empty()) BASIL_RETURN_IF_ERROR(write_accelerators(n.accelerators));
    w_.end();
    return {};
  }

  Status write_segments(const Node& n, const std::vector<Segment>& segments) {
    const bool cus = d_ == Dialect::k1_3;
    // CLE 5.2 before UP03: the node's memory is under Node, and a Segment has
    // no MemoryArray at all (a client of that engine finds one at depth 9
    // where it expects depth 5, and stops).
    const bool memory_on_node = cus && !n.memory.empty();
    w_.start("SegmentArray");
    for (const Segment& g : segments) {
      if (cus && !g.processors.empty())
        return node_refused(n, "Segment with processors outside compute units",
                            "1.3 has ComputeUnitArray");
      if (!cus && !g.compute_units.empty())
        return node_refused(n, "ComputeUnitArray", "1.3 only");
      w_.start("Segment");
      w_.attr("ordinal", std::uint64_t{g.ordinal});
      if (cus) {
        w_.start("ComputeUnitArray");
        for (const ComputeUnit& cu : g.compute_units) {
          w_.start("ComputeUnit");
          w_.attr("ordinal", std::uint64_t{cu.ordinal});
          write_processors(cu.processors);
          w_.end();
        }
        w_.end();
      } else {
        write_processors(g.processors);
      }
      if (memory_on_node && !g.memory.empty())
        return node_refused(n, "Memory under both Node and Segment", "one place per engine in 1.3");
      if (!memory_on_node) write_memory(g.memory);
      BASIL_RETURN_IF_ERROR(write_labels(g.labels));
      w_.end();
    }
    w_.end();
    return {};
  }

  // Processor: `ordinal architecture clock_mhz` up to 1.2, `ordinal` in 1.3
  // (where architecture and clock live on Socket and these fields are unused).
  void write_processors(const std::vector<Processor>& processors) {
    const bool full = d_ != Dialect::k1_3;
    w_.start("ProcessorArray");
    for (const Processor& p : processors) {
      w_.start("Processor");
      w_.attr("ordinal", std::uint64_t{p.ordinal});
      if (full) {
        w_.attr("architecture", to_string(p.architecture));
        w_.attr("clock_mhz", std::uint64_t{p.clock_mhz});
      }
      for (std::uint64_t id : p.allocations) {
        w_.start("ProcessorAllocation");
        w_.attr("reservation_id", id);
        w_.end();
      }
      w_.end();
    }
    w_.end();
  }

  void write_memory(const std::vector<Memory>& memory) {
    w_.start("MemoryArray");
    for (const Memory& m : memory) {
      w_.start("Memory");
      w_.attr("type", to_string(m.type));
      w_.attr("page_size_kb", std::uint64_t{m.page_size_kb});
      w_.attr("page_count", m.page_count);
      for (const MemoryAllocation& a : m.allocations) {
        w_.start("MemoryAllocation");
        w_.attr("reservation_id", a.reservation_id);
        w_.attr("page_count", a.page_count);
        w_.end();
      }
      w_.end();
    }
    w_.end();
  }

  Status write_labels(const std::vector<Label>& labels) {
    w_.start("LabelArray");
    for (const Label& l : labels) {
      w_.start("Label");
      BASIL_RETURN_IF_ERROR(w_.attr_text("Label", "name", l.name));
      w_.attr("type", to_string(l.type));
      w_.attr("disposition", to_string(l.disposition));
      w_.end();
    }
    w_.end();
    return {};
  }

  Status write_accelerators(const std::vector<Accelerator>& accelerators) {
    w_.start("AcceleratorArray");
    for (const Accelerator& a : accelerators) {
      w_.start("Accelerator");
      w_.attr("ordinal", std::uint64_t{a.ordinal});
      BASIL_RETURN_IF_ERROR(w_.attr_text("Accelerator", "type", a.type));
      w_.attr("state", to_string(a.state));
      BASIL_RETURN_IF_ERROR(w_.attr_text("Accelerator", "family", a.family));
      w_.attr("memory_mb", std::uint64_t{a.memory_mb});
      w_.attr("clock_mhz", std::uint64_t{a.clock_mhz});
      for (std::uint64_t id : a.allocations) {
        w_.start("AcceleratorAllocation");
        w_.attr("reservation_id", id);
        w_.end();
      }
      w_.end();
    }
    w_.end();
    return {};
  }

  Status write_reservation(const Reservation& r) {
    const std::string who = "Reservation " + std::to_string(r.reservation_id) + ": ";
    if ((r.time_stamp || r.batch_id) && !since(Dialect::k1_1))
      return not_in_dialect(d_, who + (r.time_stamp ? "time_stamp" : "batch_id"), "1.1 onwards");
    if ((r.reservation_mode || r.gpc_mode) && !since(Dialect::k1_1plus))
      return not_in_dialect(d_, who + (r.reservation_mode ? "reservation_mode" : "gpc_mode"),
                            "1.1+ onwards");
    if (!r.applications.empty() && !since(Dialect::k1_1))
      return not_in_dialect(d_, who + "ApplicationArray", "1.1 onwards");

    w_.start("Reservation");
    w_.attr("reservation_id", r.reservation_id);
    BASIL_RETURN_IF_ERROR(w_.attr_text("Reservation", "user_name", r.user_name));
    BASIL_RETURN_IF_ERROR(w_.attr_text("Reservation", "account_name", r.account_name));
    if (r.time_stamp) w_.attr("time_stamp", *r.time_stamp);
    if (r.batch_id) BASIL_RETURN_IF_ERROR(w_.attr_text("Reservation", "batch_id", *r.batch_id));
    if (r.reservation_mode) w_.attr("reservation_mode", to_string(*r.reservation_mode));
    if (r.gpc_mode) w_.attr("gpc_mode", to_string(*r.gpc_mode));
    if (since(Dialect::k1_1)) {
      w_.start("ApplicationArray");
      for (const Application& a : r.applications) {
        w_.start("Application");
        w_.attr("application_id", a.application_id);
        w_.attr("user_id", std::uint64_t{a.user_id});
        w_.attr("group_id", std::uint64_t{a.group_id});
        w_.attr("time_stamp", a.time_stamp);
        w_.start("CommandArray");
        for (const Command& c : a.commands) {
          w_.start("Command");
          w_.attr("width", c.width);
          w_.attr("depth", std::uint64_t{c.depth});
          w_.attr("nppn", std::uint64_t{c.nppn});
          w_.attr("memory", c.memory);
          BASIL_RETURN_IF_ERROR(w_.attr_text("Command", "architecture", c.architecture));
          BASIL_RETURN_IF_ERROR(w_.attr_text("Command", "cmd", c.cmd));
          w_.end();
        }
        w_.end();
        w_.end();
      }
      w_.end();
    }
    w_.end();
    return {};
  }

  // ------------------------------------------------------------ summary

  Status write(const Summary& s) {
    if (!since(Dialect::k1_3)) return not_in_dialect(d_, "Summary", "1.3 onwards");
    w_.start("Summary");
    if (s.mpp_host) BASIL_RETURN_IF_ERROR(w_.attr_text("Summary", "mpp_host", *s.mpp_host));
    if (s.timestamp) w_.attr("timestamp", *s.timestamp);
    w_.attr("changecount", s.changecount);
    w_.attr("schedchangecount", s.schedchangecount);

    w_.start("NodeSummary");
    for (const NodeSummaryEntry& e : s.nodes) {
      if (e.up && e.state != NodeState::kUp)
        return refused("NodeSummary Up entry with state " + std::string(to_string(e.state)));
      if (!e.up && e.state == NodeState::kUp)
        return refused("NodeSummary Down entry with state UP");
      w_.start(e.up ? "Up" : "Down");
      w_.attr("role", to_string(e.role));
      w_.attr("architecture", to_string(e.architecture));
      w_.attr("count", e.count);
      if (!e.up) w_.attr("state", to_string(e.state));
      w_.write_text(e.nids.format());
      w_.end();
    }
    w_.end();

    if (s.has_accel_summary) {
      w_.start("AccelSummary");
      for (const AccelSummaryTotal& t : s.accel_totals) {
        w_.start("Accelerator");
        BASIL_RETURN_IF_ERROR(w_.attr_text("Accelerator", "type", t.type));
        BASIL_RETURN_IF_ERROR(w_.attr_text("Accelerator", "family", t.family));
        w_.attr("count", t.count);
        w_.end();
      }
      for (const AccelSummaryEntry& e : s.accels) {
        if (e.up && e.state != AccelState::kUp)
          return refused("AccelSummary Up entry with state " + std::string(to_string(e.state)));
        if (!e.up && e.state == AccelState::kUp)
          return refused("AccelSummary Down entry with state UP");
        const char* element = e.up ? "Up" : "Down";
        w_.start(element);
        BASIL_RETURN_IF_ERROR(w_.attr_text(element, "type", e.type));
        BASIL_RETURN_IF_ERROR(w_.attr_text(element, "family", e.family));
        w_.attr("count", e.count);
        if (!e.up) w_.attr("state", to_string(e.state));
        w_.write_text(e.nids.format());
        w_.end();
      }
      w_.end();
    } else if (!s.accel_totals.empty() || !s.accels.empty()) {
      return refused("Summary has accelerator entries but has_accel_summary is false");
    }
    w_.end();
    return {};
  }

  // ------------------------------------------------------------ status, switch

  // <ReservationArray>/<ApplicationArray> of (id, status) items, directly
  // under ResponseData; an array is written when it has items.
  void write_items(const std::vector<ItemResult>& reservations,
                   const std::vector<ItemResult>& applications) {
    if (!reservations.empty()) {
      w_.start("ReservationArray");
      for (const ItemResult& i : reservations) {
        w_.start("Reservation");
        w_.attr("reservation_id", i.id);
        w_.attr("status", to_string(i.status));
        w_.end();
      }
      w_.end();
    }
    if (!applications.empty()) {
      w_.start("ApplicationArray");
      for (const ItemResult& i : applications) {
        w_.start("Application");
        w_.attr("application_id", i.id);
        w_.attr("status", to_string(i.status));
        w_.end();
      }
      w_.end();
    }
  }

  Status write(const StatusInfo& s) {
    if (!since(Dialect::k1_2)) return not_in_dialect(d_, "QUERY STATUS answer", "1.2 onwards");
    // It answers a request that named one kind (PROTOCOL.md 5.5).
    if (s.reservations.empty() == s.applications.empty())
      return refused("a QUERY STATUS answer lists reservations or applications, one of the two");
    write_items(s.reservations, s.applications);
    return {};
  }

  Status write(const Switched& s) {
    if (!since(Dialect::k1_2)) return not_in_dialect(d_, "SWITCH answer", "1.2 onwards");
    if (s.reservations.empty() && s.applications.empty())
      return refused("a SWITCH answer lists no reservation and no application");
    write_items(s.reservations, s.applications);
    return {};
  }

  // ------------------------------------------------------------ methods

  Status write(const Reserved& r) {
    const bool plus = since(Dialect::k1_1plus);
    if (plus && (r.admin_cookie || r.alloc_cookie))
      return not_in_dialect(d_, r.admin_cookie ? "Reserved@admin_cookie" : "Reserved@alloc_cookie",
                            "1.0 and 1.1 only");
    if (!plus && (r.has_reserved_nodes || !r.reserved_nodes.empty()))
      return not_in_dialect(d_, "ReservedNodeArray", "1.1+ onwards");
    if (!r.has_reserved_nodes && !r.reserved_nodes.empty())
      return refused("Reserved lists nodes but has_reserved_nodes is false");
    w_.start("Reserved");
    w_.attr("reservation_id", r.reservation_id);
    if (r.admin_cookie) w_.attr("admin_cookie", *r.admin_cookie);
    if (r.alloc_cookie) w_.attr("alloc_cookie", *r.alloc_cookie);
    if (r.has_reserved_nodes) {
      w_.start("ReservedNodeArray");
      for (std::uint32_t nid : r.reserved_nodes) {
        w_.start("ReservedNode");
        w_.attr("node_id", std::uint64_t{nid});
        w_.end();
      }
      w_.end();
    }
    w_.end();
    return {};
  }

  Status write(const Confirmed& c) {
    if ((c.reservation_id || c.pagg_id) && !since(Dialect::k1_1plus))
      return not_in_dialect(d_, c.reservation_id ? "Confirmed@reservation_id" : "Confirmed@pagg_id",
                            "1.1+ onwards; 1.0 and 1.1 answer a bare <Confirmed/>");
    w_.start("Confirmed");
    if (c.reservation_id) w_.attr("reservation_id", *c.reservation_id);
    if (c.pagg_id) w_.attr("pagg_id", *c.pagg_id);
    w_.end();
    return {};
  }

  Status write(const Released& r) {
    if (r.reservation_id && !since(Dialect::k1_1plus))
      return not_in_dialect(d_, "Released@reservation_id",
                            "1.1+ onwards; 1.0 and 1.1 answer a bare <Released/>");
    if (r.claims && !since(Dialect::k1_2))
      return not_in_dialect(d_, "Released@claims", "1.2 onwards");
    w_.start("Released");
    if (r.reservation_id) w_.attr("reservation_id", *r.reservation_id);
    if (r.claims) w_.attr("claims", *r.claims);
    w_.end();
    return {};
  }

  XmlWriter& w_;
  const Response& r_;
  Dialect d_;
};

// A generous guess at the document size, so that a large inventory is not
// copied while the string grows (pages reserved but never written cost no
// memory): ~140 bytes per processor with its allocation, ~1.5 KB of
// structure per node and ~1 KB per reservation. A 1.3 XC30 node is 3-6 KB
// (5.2 KB with every processor allocated).
std::size_t size_hint(const Response& r) {
  const auto* inv = std::get_if<Inventory>(&r.body);
  if (inv == nullptr) return 1024;
  std::size_t bytes = 1024;
  for (const Node& n : inv->nodes) bytes += 1536 + std::size_t{n.processor_count()} * 140;
  bytes += inv->reservations.size() * 1024;
  return bytes;
}

}  // namespace

Result<std::string> encode_request(const Request& request) {
  return write_document(512, [&](XmlWriter& w) { return RequestEncoder(w, request).run(); });
}

Result<std::string> encode_response(const Response& response) {
  std::size_t hint = 1024;
  try {
    hint = size_hint(response);
  } catch (...) {
  }
  return write_document(hint, [&](XmlWriter& w) { return ResponseEncoder(w, response).run(); });
}

}  // namespace basil
