// The XmlWriter's checks of model text and its slow paths through libxml2's
// escaping (xml_writer.h tells the format).
#include "basil_proto/src/xml_writer.h"

#include <libxml/entities.h>
#include <libxml/tree.h>
#include <libxml/xmlmemory.h>

#include <charconv>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "basil_proto/status.h"

namespace basil::encode_detail {
namespace {

const xmlChar* X(const char* s) { return reinterpret_cast<const xmlChar*>(s); }

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

}  // namespace

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

void XmlWriter::write_text(std::string_view value) {
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
Status XmlWriter::finish() {
  if (!bad_enum_.empty())
    return Status(Code::kInvalidValue,
                  "attribute " + std::string(bad_enum_) + " holds a value outside its enum");
  if (failed_) return Status(Code::kInternal, "libxml2 escaping failed (out of memory?)");
  if (depth_ != 0) return Status(Code::kInternal, "the encoder left an element open");
  put('\n');
  if (pieces_ == nullptr) {
    out_.resize(len_);
    return {};
  }
  hand_over();
  out_.clear();
  if (pieces_refused_) return Status(Code::kTransport, "the document's output was closed after " + std::to_string(handed_) + " bytes");
  return {};
}

void XmlWriter::put_escaped_attr(std::string_view value) {
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

}  // namespace basil::encode_detail
