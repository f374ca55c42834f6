// The walk: every element, attribute and text node checked against the
// structure tables (decode_tables.h), then handed to its context's handler.
//
// Choices this file makes (the header's contract leaves them open):
// - A known element in the wrong place (wrong parent, or an answer element of
//   another method) is a kStructure error in both modes; an element or
//   attribute the tables do not know is a warning in tolerant mode (an unknown
//   element is skipped with its whole subtree) and kUnknownName in strict mode.
// - A known element or attribute that belongs to another dialect (SocketArray
//   in a 1.2 document, claims in a 1.1 one) is decoded with a warning in
//   tolerant mode and is a kStructure error in strict mode. In a "1.1"
//   document, anything of 1.1+ (mpp_host, reservation_mode, ReservedNodeArray,
//   pagg_id, ...) upgrades the dialect to 1.1+ instead.
// - Message elements are accepted at any depth of a response; those directly
//   under ResponseData are collected into Response::messages, the others are
//   checked (severity) and dropped.
// - Non-whitespace text in an element that holds none: kStructure in strict
//   mode, one warning per element in tolerant mode (the text is ignored).
// - At most kMaxWarnings warnings are kept; one more says the rest were
//   dropped, so hostile input cannot grow the list without bound.
#include "basil_proto/src/decode_walk.h"

#include <libxml/SAX2.h>
#include <libxml/parser.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "basil_proto/dialect.h"
#include "basil_proto/model.h"
#include "basil_proto/status.h"
#include "basil_proto/src/decode_tables.h"

namespace basil::decode_detail {

// ---------------------------------------------------------------- errors

int Walk::line() const { return parser != nullptr ? xmlSAX2GetLineNumber(parser) : 0; }
int Walk::column() const { return parser != nullptr ? xmlSAX2GetColumnNumber(parser) : 0; }

std::string Walk::path(std::string_view extra) const {
  std::string p;
  for (const Frame& f : stack) {
    p += '/';
    p.append(f.name);
  }
  if (skip > 0) {
    p += '/';
    p += skip_name;
  }
  if (!extra.empty()) {
    p += '/';
    p.append(extra);
  }
  if (p.empty()) p = "/";
  return p;
}

void Walk::fail_at(Code code, std::string message, int l, int c, std::string_view extra) {
  if (failed) return;
  failed = true;
  failed_while_finishing = finishing;
  status = Status(code, std::move(message));
  status.at(l, c, path(extra));
}

void Walk::fail(Code code, std::string message, std::string_view extra) {
  fail_at(code, std::move(message), line(), column(), extra);
}

void Walk::stop_if_failed() {
  if (failed && !finishing && parser != nullptr) xmlStopParser(parser);
}

void Walk::warn_at(int l, int c, std::string_view message) {
  if (out.warnings.size() > kMaxWarnings) return;
  std::string w = std::to_string(l);
  w += ':';
  w += std::to_string(c);
  w += ": ";
  if (out.warnings.size() == kMaxWarnings) {
    w += "too many warnings; the rest are dropped";
  } else {
    w.append(message);
  }
  out.warnings.push_back(std::move(w));
}

void Walk::warn(std::string_view message) { warn_at(line(), column(), message); }

std::string Walk::method_name() const {
  if (kind == DocumentKind::kRequest && req != nullptr) {
    std::string m(to_string(req->method()));
    if (auto t = req->query_type()) {
      m += ' ';
      m.append(to_string(*t));
    }
    return m + " request";
  }
  if (resp != nullptr) return std::string(to_string(resp->method)) + " response";
  return "this document";
}

bool Walk::dialect_ok(DMask mask, std::string_view what) {
  if ((mask & dmask) != 0) return true;
  if (dialect == Dialect::k1_1 && (mask & kD11P) != 0) {
    dialect = Dialect::k1_1plus;
    dmask = kD11P;
    return true;
  }
  std::string m(what);
  m += " is not part of dialect ";
  m.append(dialect_id(dialect));
  if (opt.strict) {
    fail(Code::kStructure, std::move(m));
    return false;
  }
  warn(m);
  return true;
}

void Walk::out_of_memory() { fail(Code::kInternal, "out of memory while decoding"); }

// ---------------------------------------------------------------- elements

void Walk::start(const xmlChar* localname, const xmlChar* prefix, const xmlChar* uri,
                 int nb_attributes, const xmlChar** attributes) {
  if (skip > 0) {
    ++skip;
    return;
  }
  if (stack.empty()) {
    start_root(sv(localname), prefix != nullptr || uri != nullptr, nb_attributes, attributes);
    return;
  }

  const Ctx parent_ctx = stack.back().ctx;
  const ElemSpec* spec = nullptr;
  bool name_known_here = false;
  if (prefix == nullptr && uri == nullptr) {
    const EdgeRange& r = kEdgeRanges[static_cast<std::size_t>(parent_ctx)];
    for (std::size_t i = r.first; i < std::size_t{r.first} + r.count; ++i) {
      const ElemSpec& e = kElems[i];
      if (!is_elem_name(i, localname)) continue;
      name_known_here = true;
      if ((e.ops & ops) != 0) {
        spec = &e;
        break;
      }
    }
  }
  if (spec == nullptr) {
    spec = no_edge(sv(localname), prefix, uri, name_known_here, parent_ctx);
    if (spec == nullptr) return;
  }
  const std::string_view name = spec->name;

  if (stack.full()) {
    fail(Code::kInternal, "element nesting beyond the decoder's tables", name);
    return;
  }
  stack.push(spec->ctx, spec->name);
  Frame& parent = stack[stack.size() - 2];
  const auto child = static_cast<std::size_t>(spec->ctx);
  if ((spec->flags & kUnique) != 0 && parent.seen.test(child)) {
    duplicate(name, parent.name);
    return;
  }
  parent.seen.set(child);
  if ((spec->read() & dmask) == 0 &&
      !dialect_ok(spec->read(), "element " + std::string(name))) {
    return;
  }
  if (!collect_attrs(nb_attributes, attributes)) return;
  ctx_spec(spec->ctx).on_start(*this);
}

void Walk::duplicate(std::string_view name, std::string_view parent) {
  fail(Code::kStructure, "more than one " + std::string(name) + " under " + std::string(parent));
}

// An element that is not an edge of its parent: a Message (allowed
// anywhere in a response, returned as its spec), or an error or an
// unknown subtree to skip (nullptr).
const ElemSpec* Walk::no_edge(std::string_view name, const xmlChar* prefix, const xmlChar* uri,
                             bool name_known_here, Ctx parent_ctx) {
  static constexpr ElemSpec kMessageElem{Ctx::kDocument, kMessageName, Ctx::kMessage};
  const bool plain = prefix == nullptr && uri == nullptr;
  if (plain && name == kMessageName && kind == DocumentKind::kResponse &&
      parent_ctx != Ctx::kMessage) {
    return &kMessageElem;
  }
  if (name_known_here) {
    fail(Code::kStructure,
         "element " + std::string(name) + " does not belong in a " + method_name(), name);
  } else if (plain && known_anywhere(name)) {
    fail(Code::kStructure,
         "element " + std::string(name) + " is not allowed under " + std::string(top_name()),
         name);
  } else {
    unknown_element(name, prefix);
  }
  return nullptr;
}

bool Walk::known_anywhere(std::string_view name) {
  if (name == kMessageName) return true;
  return std::any_of(std::begin(kElems), std::end(kElems),
                     [&](const ElemSpec& e) { return e.name == name; });
}

void Walk::unknown_element(std::string_view name, const xmlChar* prefix) {
  std::string full;
  if (prefix != nullptr) {
    full.append(sv(prefix));
    full += ':';
  }
  full.append(name);
  std::string m = "unknown element " + full + " under " + std::string(top_name());
  if (opt.strict) {
    fail(Code::kUnknownName, std::move(m), full);
    return;
  }
  warn(m + " (skipped)");
  skip = 1;
  skip_name = std::move(full);
}

bool Walk::unknown_attr(std::string_view name, const xmlChar* prefix, std::string_view why) {
  std::string full;
  if (prefix != nullptr) {
    full.append(sv(prefix));
    full += ':';
  }
  full.append(name);
  std::string m = "unknown attribute " + std::string(top_name()) + "@" + full;
  m.append(why);
  if (opt.strict) {
    fail(Code::kUnknownName, std::move(m));
    return false;
  }
  warn(m + " (ignored)");
  return true;
}

bool Walk::collect_attrs(int nb_attributes, const xmlChar** attributes) {
  const Ctx ctx = stack.back().ctx;
  const std::span<const AttrSpec> specs = ctx_spec(ctx).attrs;
  const std::size_t n = specs.size();
  for (std::size_t j = 0; j < n; ++j) attrs[j].present = false;
  std::size_t next = 0;
  for (int k = 0; k < nb_attributes; ++k) {
    const xmlChar** at = attributes + static_cast<std::ptrdiff_t>(k) * 5;
    const std::string_view value = sv(at[3], at[4]);
    if (value.size() > opt.max_text_bytes) {
      attr_too_long(sv(at[0]));
      return false;
    }
    // Documents list attributes in table order: try the next slot first.
    std::size_t j = n;
    if (at[1] == nullptr) {
      if (next < n && is_attr_name(ctx, next, specs[next].name, at[0])) {
        j = next;
      } else {
        j = 0;
        while (j < n && !is_attr_name(ctx, j, specs[j].name, at[0])) ++j;
      }
      next = j + 1;
    }
    if (j == n) {
      if (!unknown_attr(sv(at[0]), at[1], "")) return false;
      continue;
    }
    const AttrSpec& s = specs[j];
    if ((s.ops & ops) == 0) {
      if (!attr_of_other_method(s.name)) return false;
      continue;
    }
    if ((s.read() & dmask) == 0 && !attr_dialect_ok(s.read(), s.name)) return false;
    attrs[j].name = s.name;
    attrs[j].value = value;
    attrs[j].present = true;
    if (value.find('&') != std::string_view::npos) {
      unescape_amp(value, unescaped[j]);
      attrs[j].value = unescaped[j];
    }
  }
  for (std::size_t j = 0; j < n; ++j) {
    if (specs[j].required && (specs[j].ops & ops) != 0 && !attrs[j].present) {
      missing_attr(specs[j].name);
      return false;
    }
  }
  return true;
}

void Walk::attr_too_long(std::string_view aname) {
  fail(Code::kLimitExceeded, "attribute " + std::string(top_name()) + "@" + std::string(aname) +
                                 " longer than max_text_bytes (" +
                                 std::to_string(opt.max_text_bytes) + ")");
}

bool Walk::attr_of_other_method(std::string_view aname) {
  return unknown_attr(aname, nullptr, " in a " + method_name());
}

bool Walk::attr_dialect_ok(DMask mask, std::string_view aname) {
  return dialect_ok(mask, "attribute " + std::string(top_name()) + "@" + std::string(aname));
}

void Walk::missing_attr(std::string_view aname) {
  fail(Code::kStructure, "element " + std::string(top_name()) + " lacks the required attribute " +
                             std::string(aname));
}

// "&#38;" -> '&' (the only reference libxml2 leaves in attribute values:
// every other one is resolved, or refused before it gets here).
void Walk::unescape_amp(std::string_view in, std::string& out) {
  static constexpr std::string_view kRef = "&#38;";
  out.clear();
  std::size_t at = 0;
  while (true) {
    const std::size_t hit = in.find(kRef, at);
    out.append(in.substr(at, hit - at));
    if (hit == std::string_view::npos) break;
    out += '&';
    at = hit + kRef.size();
  }
}

void Walk::end() {
  if (skip > 0) {
    --skip;
    return;
  }
  if (stack.empty()) return;
  const Frame& f = stack.back();
  if (!check_required_children(f)) return;
  if (const Handler on_end = ctx_spec(f.ctx).on_end) on_end(*this);
  if (failed) return;
  stack.pop();
}

bool Walk::check_required_children(const Frame& f) {
  const EdgeRange& r = kEdgeRanges[static_cast<std::size_t>(f.ctx)];
  if (!r.has_required) return true;
  for (std::size_t i = r.first; i < std::size_t{r.first} + r.count; ++i) {
    const ElemSpec& e = kElems[i];
    if ((e.flags & kRequired) == 0 || (e.ops & ops) == 0) continue;
    if (!f.seen.test(static_cast<std::size_t>(e.ctx))) {
      fail(Code::kStructure,
           "element " + std::string(f.name) + " needs a " + std::string(e.name) + " element");
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------- text

void Walk::characters(std::string_view chunk) {
  if (skip > 0 || stack.empty()) return;
  Frame& f = stack.back();
  switch (ctx_spec(f.ctx).text) {
    case Text::kData: text.append(chunk); return;
    case Text::kMessage: msg_text.append(chunk); return;
    case Text::kNone: break;
  }
  if (!all_space(chunk)) stray_text(f, chunk);
}

void Walk::stray_text(Frame& f, std::string_view chunk) {
  std::string m = "text " + quote(trim(chunk)) + " is not allowed in " + std::string(f.name);
  if (opt.strict) {
    fail(Code::kStructure, std::move(m));
  } else if (!f.text_warned) {
    f.text_warned = true;
    warn(m + " (ignored)");
  }
}

}  // namespace basil::decode_detail
