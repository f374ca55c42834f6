// The streaming BASIL decoder: a libxml2 SAX2 push parser (never a DOM) whose
// callbacks walk the structure tables of decode_tables.h and fill the model.
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
#include <libxml/SAX2.h>
#include <libxml/encoding.h>
#include <libxml/entities.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <charconv>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "basil_proto/codec.h"
#include "basil_proto/dialect.h"
#include "basil_proto/model.h"
#include "basil_proto/nidlist.h"
#include "basil_proto/status.h"
#include "basil_proto/src/decode_tables.h"

namespace basil {

namespace {

using namespace decode_detail;  // NOLINT: the private tables of this file

constexpr std::size_t kMaxWarnings = 1000;
constexpr std::size_t kFeedPiece = std::size_t{1} << 30;  // xmlParseChunk takes an int
constexpr std::size_t kDecodeChunk = std::size_t{64}
                                     << 10;  // decode(): keeps libxml2's buffer small
constexpr std::size_t kQuoteMax = 64;        // bytes of a bad value quoted in a message

struct CtxtDeleter {
  void operator()(xmlParserCtxt* c) const { xmlFreeParserCtxt(c); }
};
using CtxtPtr = std::unique_ptr<xmlParserCtxt, CtxtDeleter>;

std::string_view sv(const xmlChar* s) {
  return s == nullptr ? std::string_view{} : std::string_view(reinterpret_cast<const char*>(s));
}

std::string_view sv(const xmlChar* begin, const xmlChar* end) {
  return {reinterpret_cast<const char*>(begin), static_cast<std::size_t>(end - begin)};
}

inline bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

// True when `s` is whitespace only. libxml2 passes no other byte below 0x21
// in character data (other control characters are not XML), so this tests
// for bytes <= 0x20, eight at a time: for a byte b < 0x80, b + 0x5F sets the
// high bit exactly when b > 0x20, and a byte >= 0x80 has it set already
// (a carry out of such a byte can only mark a higher byte, and the answer
// is "not blank" then anyway).
inline bool all_space(std::string_view s) {
  constexpr std::uint64_t kAdd = 0x5F5F5F5F5F5F5F5FULL;
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if ((((w + kAdd) | w) & kHigh) != 0) return false;
  }
  for (; i < s.size(); ++i) {
    if (static_cast<unsigned char>(s[i]) > 0x20) return false;
  }
  return true;
}

// Equality of a table name and a NUL-terminated name from libxml2, without
// strlen and without a call to memcmp for a dozen bytes.
inline bool same_z(std::string_view a, const xmlChar* z) {
  const auto* c = reinterpret_cast<const char*>(z);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (c[i] != a[i]) return false;  // also stops at the NUL of a shorter name
  }
  return c[a.size()] == '\0';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// A value for a message, cut to kQuoteMax bytes.
std::string clip(std::string_view v) {
  if (v.size() <= kQuoteMax) return std::string(v);
  return std::string(v.substr(0, kQuoteMax)) + "...";
}

// A value quoted for a message, cut to kQuoteMax bytes.
std::string quote(std::string_view v) {
  std::string q = "\"";
  if (v.size() > kQuoteMax) {
    q.append(v.substr(0, kQuoteMax));
    q += "...";
  } else {
    q.append(v);
  }
  q += '"';
  return q;
}

OpMask op_of(Method m, std::optional<QueryType> t) {
  switch (m) {
    case Method::kReserve: return kOpReserve;
    case Method::kConfirm: return kOpConfirm;
    case Method::kRelease: return kOpRelease;
    case Method::kSwitch: return kOpSwitch;
    case Method::kUndefined: return kOpUndefined;
    case Method::kQuery:
      if (!t) return kOpQuery;
      switch (*t) {
        case QueryType::kEngine: return kOpEngine;
        case QueryType::kInventory: return kOpInventory;
        case QueryType::kSummary: return kOpSummary;
        case QueryType::kStatus: return kOpStatus;
      }
      return kOpQuery;
  }
  return kOpAny;
}

std::once_flag g_libxml_init;

}  // namespace

// One attribute of the element being started, in its context's table order.
struct DecodeAttr {
  std::string_view name;
  std::string_view value;
  bool present = false;
};

struct Decoder::Impl {
  struct Frame {
    Ctx ctx;
    std::string_view name;
    std::bitset<kCtxCount> seen;  // child contexts met: uniqueness, required children
    bool text_warned = false;
  };

  // The open known elements. The tables nest at most 15 deep (BasilResponse
  // down to ProcessorAllocation, plus a Message), so a fixed array does.
  class FrameStack {
   public:
    static constexpr std::size_t kCapacity = 32;
    bool empty() const { return size_ == 0; }
    std::size_t size() const { return size_; }
    bool full() const { return size_ == kCapacity; }
    Frame& back() { return frames_[size_ - 1]; }
    const Frame& back() const { return frames_[size_ - 1]; }
    Frame& operator[](std::size_t i) { return frames_[i]; }
    const Frame& operator[](std::size_t i) const { return frames_[i]; }
    void push(Ctx ctx, std::string_view name) {
      Frame& f = frames_[size_++];
      f.ctx = ctx;
      f.name = name;
      f.seen.reset();
      f.text_warned = false;
    }
    void pop() { --size_; }
    const Frame* begin() const { return frames_.data(); }
    const Frame* end() const { return frames_.data() + size_; }

   private:
    std::array<Frame, kCapacity> frames_{};
    std::size_t size_ = 0;
  };

  DecodeOptions opt;
  Expect expect;
  CtxtPtr ctxt;

  Status status;
  bool failed = false;
  bool finished = false;
  bool root_seen = false;
  bool root_done = false;
  std::optional<RequestEnvelope> envelope;  // a BasilRequest's root start tag, as read
  std::optional<ResponseStatus> seen_status;  // ResponseData@status, once read

  std::size_t fed = 0;
  std::size_t depth = 0;
  std::size_t skip = 0;  // > 0: inside an unknown subtree, at this depth below it
  std::string skip_name;
  std::size_t text_run = 0;  // bytes of the current text node

  FrameStack stack;
  Decoded out;

  // Document-wide state.
  DocumentKind kind = DocumentKind::kResponse;
  Dialect dialect = Dialect::k1_3;
  DMask dmask = kD13;
  OpMask ops = kOpAny;
  bool failure_only_protocol = false;  // "" or a protocol the codec does not speak

  // Text of data elements (NID lists) and of Message elements.
  std::string text;
  std::string msg_text;
  Severity msg_severity = Severity::kError;

  DecodeAttr attrs[kMaxAttrs];

  // libxml2 interns names in its dictionary, so a table name met once is
  // usually met again at the same address: the hot lookups compare that
  // pointer first, then the first byte, and only then the whole name.
  std::array<const xmlChar*, std::size(kElems)> elem_names{};
  std::array<std::array<const xmlChar*, kMaxAttrs>, kCtxCount> attr_names{};

  static bool is_name(const xmlChar*& known, std::string_view name, const xmlChar* z) {
    if (known == z) return true;
    if (static_cast<char>(z[0]) != name[0] || !same_z(name, z)) return false;
    known = z;
    return true;
  }

  bool is_elem_name(std::size_t i, const xmlChar* z) {
    return is_name(elem_names[i], kElems[i].name, z);
  }

  bool is_attr_name(Ctx ctx, std::size_t j, std::string_view name, const xmlChar* z) {
    return is_name(attr_names[static_cast<std::size_t>(ctx)][j], name, z);
  }

  // Attribute values that held '&': without XML_PARSE_NOENT libxml2 hands
  // every '&' of an attribute value (from &amp; or &#38;) over as "&#38;".
  std::string unescaped[kMaxAttrs];

  // True during the final xmlParseChunk of finish(): libxml2 then reports a
  // truncated start tag to startElementNs before it says the tag is not
  // closed; a well-formedness error found in that call wins over ours.
  bool finishing = false;
  bool failed_while_finishing = false;

  // Where the elements being decoded go. Each is set by the start of its
  // element; the structure checks guarantee the parents are set before.
  Response* resp = nullptr;
  Inventory* inv = nullptr;
  Node* node = nullptr;
  Socket* socket = nullptr;
  Segment* seg = nullptr;
  ComputeUnit* cu = nullptr;
  std::vector<Processor>* procs = nullptr;
  Processor* proc = nullptr;
  std::vector<Memory>* mems = nullptr;
  Memory* mem = nullptr;
  std::vector<Label>* labels = nullptr;
  Accelerator* accel = nullptr;
  Reservation* resv = nullptr;
  Application* app = nullptr;
  Summary* sum = nullptr;
  NodeSummaryEntry* nse = nullptr;
  AccelSummaryTotal* as_total = nullptr;
  AccelSummaryEntry* ase = nullptr;
  std::vector<ItemResult>* items = nullptr;
  Reserved* reserved = nullptr;

  // Capacity hints: the size of the last array of the same kind. Inventories
  // repeat one node layout, so this gives exact capacities with one
  // allocation per array. Capped, and only ever as large as an array the
  // document really held, so it cannot amplify hostile input.
  struct Hints {
    std::size_t procs = 0;
    std::size_t cus = 0;
    std::size_t segments = 0;
    std::size_t sockets = 0;
  } hints;
  static constexpr std::size_t kMaxHint = 64;

  template <typename T>
  static void reserve_hint(std::vector<T>& v, std::size_t hint) {
    if (hint > 0) v.reserve(std::min(hint, kMaxHint));
  }

  Request* req = nullptr;
  InventoryQuery* iq = nullptr;
  bool iq_node_array = false;
  bool iq_changecount = false;
  bool iq_res_array = false;
  StatusQuery* sq = nullptr;
  SwitchRequest* sw = nullptr;
  ReserveRequest* reserve = nullptr;
  ReserveParam* rp = nullptr;

  Impl(DecodeOptions o, Expect e) : opt(o), expect(e) {
    std::call_once(g_libxml_init, [] { xmlInitParser(); });
    text.reserve(256);

    xmlSAXHandler sax;
    std::memset(&sax, 0, sizeof sax);
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = &Impl::sax_start;
    sax.endElementNs = &Impl::sax_end;
    sax.characters = &Impl::sax_characters;
    sax.ignorableWhitespace = &Impl::sax_characters;
    sax.cdataBlock = &Impl::sax_characters;
    sax.internalSubset = &Impl::sax_subset;
    sax.externalSubset = &Impl::sax_subset;
    sax.entityDecl = &Impl::sax_entity_decl;
    sax.unparsedEntityDecl = &Impl::sax_unparsed_entity_decl;
    sax.notationDecl = &Impl::sax_notation_decl;
    sax.elementDecl = &Impl::sax_element_decl;
    sax.attributeDecl = &Impl::sax_attribute_decl;
    sax.getEntity = &Impl::sax_get_entity;
    sax.getParameterEntity = &Impl::sax_get_entity;
    sax.resolveEntity = &Impl::sax_resolve_entity;
    sax.reference = &Impl::sax_reference;
    sax.serror = &Impl::sax_error;
    sax.startDocument = &Impl::sax_start_document;

    ctxt.reset(xmlCreatePushParserCtxt(&sax, this, nullptr, 0, nullptr));
    if (!ctxt) {
      failed = true;
      status = Status(Code::kInternal, "cannot create the XML parser");
      return;
    }
    // No NOENT (entities are not substituted), no DTDLOAD/DTDATTR/DTDVALID,
    // no XINCLUDE, no HUGE (libxml2 keeps its own limits).
    xmlCtxtUseOptions(ctxt.get(), XML_PARSE_NONET);
    ctxt->replaceEntities = 0;
    ctxt->loadsubset = 0;
    ctxt->validate = 0;
  }

  // ------------------------------------------------------------ errors

  int line() const { return ctxt ? xmlSAX2GetLineNumber(ctxt.get()) : 0; }
  int column() const { return ctxt ? xmlSAX2GetColumnNumber(ctxt.get()) : 0; }

  std::string path(std::string_view extra = {}) const {
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

  void fail_at(Code code, std::string message, int l, int c, std::string_view extra = {}) {
    if (failed) return;
    failed = true;
    failed_while_finishing = finishing;
    status = Status(code, std::move(message));
    status.at(l, c, path(extra));
  }

  // Records the first error. The parser is stopped by the caller (the
  // element callbacks and feed()), never from inside characters().
  void fail(Code code, std::string message, std::string_view extra = {}) {
    fail_at(code, std::move(message), line(), column(), extra);
  }

  void stop_if_failed() {
    if (failed && !finishing && ctxt) xmlStopParser(ctxt.get());
  }

  void warn_at(int l, int c, std::string_view message) {
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

  void warn(std::string_view message) { warn_at(line(), column(), message); }

  std::string_view top_name() const { return stack.empty() ? "" : stack.back().name; }

  std::string method_name() const {
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

  // Accepts an item of the given dialects in this document: upgrades 1.1 to
  // 1.1+ on a 1.1+ marker, else warns (tolerant) or fails (strict).
  [[gnu::cold]] [[gnu::noinline]] bool dialect_ok(DMask mask, std::string_view what) {
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

  // ------------------------------------------------------------ values

  template <typename T>
  bool number(const DecodeAttr& a, T& out_value) {
    if (!a.present) return true;
    const char* b = a.value.data();
    const char* e = b + a.value.size();
    T v{};
    auto [ptr, ec] = std::from_chars(b, e, v, 10);
    if (a.value.empty() || ec == std::errc::invalid_argument || ptr != e) {
      fail(Code::kInvalidValue, std::string(top_name()) + "@" + std::string(a.name) + ": " +
                                    quote(a.value) + " is not a non-negative integer");
      return false;
    }
    if (ec == std::errc::result_out_of_range) {
      fail(Code::kInvalidValue, std::string(top_name()) + "@" + std::string(a.name) + ": " +
                                    quote(a.value) + " is out of range (at most " +
                                    std::to_string(std::numeric_limits<T>::max()) + ")");
      return false;
    }
    out_value = v;
    return true;
  }

  template <typename T>
  bool opt_number(const DecodeAttr& a, std::optional<T>& out_value) {
    if (!a.present) return true;
    T v{};
    if (!number(a, v)) return false;
    out_value = v;
    return true;
  }

  template <typename E>
  bool enum_value(const DecodeAttr& a, E& out_value) {
    if (!a.present) return true;
    if (auto v = parse_enum<E>(a.value)) {
      out_value = *v;
      return true;
    }
    std::string m =
        std::string(top_name()) + "@" + std::string(a.name) + ": unknown value " + quote(a.value);
    if (!opt.strict) {
      out_value = unknown_value<E>();
      warn(m + ", read as " + std::string(to_string(out_value)));
      return true;
    }
    fail(Code::kInvalidValue, std::move(m));
    return false;
  }

  template <typename E>
  bool opt_enum(const DecodeAttr& a, std::optional<E>& out_value) {
    if (!a.present) return true;
    E v{};
    if (!enum_value(a, v)) return false;
    out_value = v;
    return true;
  }

  static void str(const DecodeAttr& a, std::string& out_value) {
    if (a.present) out_value.assign(a.value);
  }

  static void opt_str(const DecodeAttr& a, std::optional<std::string>& out_value) {
    if (a.present) out_value.emplace(a.value);
  }

  bool nid_list(NidList& out_list) {
    Result<NidList> r = NidList::parse(trim(text));
    if (!r) {
      fail(Code::kInvalidValue,
           std::string(top_name()) + ": bad NID list: " + r.status().message());
      return false;
    }
    out_list = std::move(r).value();
    return true;
  }

  // The answer element of a response: at most one kind per document.
  template <typename T>
  T* body() {
    if (std::holds_alternative<std::monostate>(resp->body)) return &resp->body.emplace<T>();
    if (T* t = std::get_if<T>(&resp->body)) return t;
    fail(Code::kStructure,
         "element " + std::string(top_name()) + ": a response carries one answer only");
    return nullptr;
  }

  // ------------------------------------------------------------ the walk

  void start(const xmlChar* localname, const xmlChar* prefix, const xmlChar* uri, int nb_attributes,
             const xmlChar** attributes) {
    if (failed) return;
    ++depth;
    text_run = 0;
    if (depth > opt.max_depth) {
      const std::string_view name = sv(localname);
      too_deep(name);
      return;
    }
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
    on_start(spec->ctx, parent_ctx);
  }

  [[gnu::cold]] [[gnu::noinline]] void too_deep(std::string_view name) {
    fail(Code::kLimitExceeded,
         "elements nested deeper than max_depth (" + std::to_string(opt.max_depth) + ")",
         skip > 0 ? std::string_view{} : name);
  }

  [[gnu::cold]] [[gnu::noinline]] void duplicate(std::string_view name, std::string_view parent) {
    fail(Code::kStructure, "more than one " + std::string(name) + " under " + std::string(parent));
  }

  // An element that is not an edge of its parent: a Message (allowed
  // anywhere in a response, returned as its spec), or an error or an
  // unknown subtree to skip (nullptr).
  [[gnu::noinline]] const ElemSpec* no_edge(std::string_view name, const xmlChar* prefix,
                                            const xmlChar* uri, bool name_known_here,
                                            Ctx parent_ctx) {
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

  static bool known_anywhere(std::string_view name) {
    if (name == kMessageName) return true;
    return std::any_of(std::begin(kElems), std::end(kElems),
                       [&](const ElemSpec& e) { return e.name == name; });
  }

  void unknown_element(std::string_view name, const xmlChar* prefix) {
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

  bool unknown_attr(std::string_view name, const xmlChar* prefix, std::string_view why) {
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

  // Fills attrs[] in the table order of the current context; checks
  // lengths, unknown names, dialects and required attributes.
  bool collect_attrs(int nb_attributes, const xmlChar** attributes) {
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

  [[gnu::cold]] [[gnu::noinline]] void attr_too_long(std::string_view aname) {
    fail(Code::kLimitExceeded, "attribute " + std::string(top_name()) + "@" + std::string(aname) +
                                   " longer than max_text_bytes (" +
                                   std::to_string(opt.max_text_bytes) + ")");
  }

  [[gnu::cold]] [[gnu::noinline]] bool attr_of_other_method(std::string_view aname) {
    return unknown_attr(aname, nullptr, " in a " + method_name());
  }

  [[gnu::cold]] [[gnu::noinline]] bool attr_dialect_ok(DMask mask, std::string_view aname) {
    return dialect_ok(mask, "attribute " + std::string(top_name()) + "@" + std::string(aname));
  }

  [[gnu::cold]] [[gnu::noinline]] void missing_attr(std::string_view aname) {
    fail(Code::kStructure, "element " + std::string(top_name()) + " lacks the required attribute " +
                               std::string(aname));
  }

  // "&#38;" -> '&' (the only reference libxml2 leaves in attribute values:
  // every other one is resolved, or refused before it gets here).
  static void unescape_amp(std::string_view in, std::string& out) {
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

  bool set_protocol(std::string_view p) {
    std::string proto(p);
    DMask ext = 0;
    if (p == "1.0") {
      dialect = Dialect::k1_0;
    } else if (p == "1.1") {
      dialect = Dialect::k1_1;
    } else if (p == "1.2") {
      dialect = Dialect::k1_2;
    } else if (p == "1.3") {
      dialect = Dialect::k1_3;
    } else if (p == "1.4" || p == "1.5" || p == "1.6" || p == "1.7") {
      dialect = Dialect::k1_3;
      ext = kDExt;
      warn("protocol " + proto + " is decoded as dialect 1.3");
    } else if (kind == DocumentKind::kResponse) {
      // A FAILURE echoes whatever protocol its request named, or "" (ALPS);
      // checked against ResponseData@status.
      dialect = Dialect::k1_3;
      failure_only_protocol = true;
    } else {
      fail(Code::kUnsupportedProtocol, "unsupported BASIL protocol " + quote(p));
      return false;
    }
    dmask = static_cast<DMask>(ext | dialect_bit(dialect));
    if (kind == DocumentKind::kRequest) {
      req->protocol = std::move(proto);
    } else {
      resp->protocol = std::move(proto);
    }
    return true;
  }

  // Before anything about the request is judged: its protocol and method as
  // written, so that even a request refused further on gets a FAILURE its
  // client accepts.
  void note_envelope(int nb_attributes, const xmlChar** attributes) {
    RequestEnvelope e;
    std::string value;
    for (int k = 0; k < nb_attributes; ++k) {
      const xmlChar** at = attributes + static_cast<std::ptrdiff_t>(k) * 5;
      if (at[1] != nullptr) continue;
      const std::string_view aname = sv(at[0]);
      if (aname != "protocol" && aname != "method") continue;
      unescape_amp(sv(at[3], at[4]), value);
      if (aname == "protocol") {
        e.protocol = value;
      } else if (auto m = parse_enum<Method>(value)) {
        e.method = *m;
      }
    }
    envelope = std::move(e);
  }

  void start_root(std::string_view name, bool namespaced, int nb_attributes,
                  const xmlChar** attributes) {
    root_seen = true;
    if (!namespaced && name == "BasilRequest") note_envelope(nb_attributes, attributes);
    if (!namespaced && name == "BasilResponse") {
      kind = DocumentKind::kResponse;
    } else if (!namespaced && name == "BasilRequest") {
      kind = DocumentKind::kRequest;
    } else {
      fail(Code::kStructure,
           "root element " + clip(name) + " is neither BasilRequest nor BasilResponse", clip(name));
      return;
    }
    if ((expect == Expect::kRequest && kind != DocumentKind::kRequest) ||
        (expect == Expect::kResponse && kind != DocumentKind::kResponse)) {
      fail(Code::kStructure,
           std::string("expected a ") +
               (expect == Expect::kRequest ? "BasilRequest" : "BasilResponse") + ", got " +
               std::string(name),
           name);
      return;
    }
    out.kind = kind;
    const bool is_request = kind == DocumentKind::kRequest;
    stack.push(is_request ? Ctx::kReqRoot : Ctx::kRespRoot,
               is_request ? kElems[1].name : kElems[0].name);
    if (is_request) {
      req = &out.document.emplace<Request>();
    } else {
      resp = &out.document.emplace<Response>();
    }

    // protocol (and for a request method and type) decide the dialect and
    // the operation, which the attribute checks need.
    std::optional<std::string_view> protocol, method, type;
    for (int k = 0; k < nb_attributes; ++k) {
      const xmlChar** at = attributes + static_cast<std::ptrdiff_t>(k) * 5;
      if (at[1] != nullptr) continue;
      const std::string_view aname = sv(at[0]);
      const std::string_view value = sv(at[3], at[4]);
      if (aname == "protocol") protocol = value;
      if (aname == "method") method = value;
      if (aname == "type") type = value;
    }
    if (!protocol) {
      fail(Code::kStructure,
           "element " + std::string(name) + " lacks the required attribute protocol");
      return;
    }
    if (!set_protocol(*protocol)) return;
    if (!is_request) {
      collect_attrs(nb_attributes, attributes);
      return;
    }

    if (!method) {
      fail(Code::kStructure, "element BasilRequest lacks the required attribute method");
      return;
    }
    const std::optional<Method> m = parse_enum<Method>(*method);
    if (!m || *m == Method::kUndefined) {
      fail(Code::kInvalidValue, "BasilRequest@method: unknown method " + quote(*method));
      return;
    }
    std::optional<QueryType> t;
    if (*m == Method::kQuery) {
      if (!type) {
        fail(Code::kStructure, "element BasilRequest lacks the required attribute type");
        return;
      }
      t = parse_enum<QueryType>(*type);
      if (!t) {
        fail(Code::kInvalidValue, "QUERY type " + clip(*type) + " is not supported");
        return;
      }
    }
    ops = op_of(*m, t);
    if (const OpSpec* o = op_spec(ops); o != nullptr && !dialect_ok(o->dialects, o->name)) return;

    // The body first: messages about the root's attributes name the method.
    switch (*m) {
      case Method::kQuery:
        switch (*t) {
          case QueryType::kEngine: req->body.emplace<EngineQuery>(); break;
          case QueryType::kInventory: iq = &req->body.emplace<InventoryQuery>(); break;
          case QueryType::kSummary: req->body.emplace<SummaryQuery>(); break;
          case QueryType::kStatus: sq = &req->body.emplace<StatusQuery>(); break;
        }
        break;
      case Method::kReserve: reserve = &req->body.emplace<ReserveRequest>(); break;
      case Method::kSwitch: sw = &req->body.emplace<SwitchRequest>(); break;
      case Method::kConfirm: req->body.emplace<ConfirmRequest>(); break;
      case Method::kRelease: req->body.emplace<ReleaseRequest>(); break;
      case Method::kUndefined: break;
    }
    if (!collect_attrs(nb_attributes, attributes)) return;

    const DecodeAttr* a = attrs;
    switch (*m) {
      case Method::kConfirm: {
        ConfirmRequest c;
        std::optional<std::uint64_t> pagg, cookie;
        if (!number(a[ix(kReqRootAttrs, "reservation_id")], c.reservation_id) ||
            !opt_number(a[ix(kReqRootAttrs, "pagg_id")], pagg) ||
            !opt_number(a[ix(kReqRootAttrs, "admin_cookie")], cookie) ||
            !same_cookie(pagg, cookie)) {
          return;
        }
        if (!pagg && !cookie) {
          fail(Code::kStructure, "a CONFIRM request needs pagg_id or admin_cookie");
          return;
        }
        c.pagg_id = pagg ? *pagg : *cookie;
        opt_str(a[ix(kReqRootAttrs, "job_name")], c.job_name);
        req->body = std::move(c);
        break;
      }
      case Method::kRelease: {
        ReleaseRequest r;
        std::optional<std::uint64_t> pagg, cookie;
        if (!number(a[ix(kReqRootAttrs, "reservation_id")], r.reservation_id) ||
            !opt_number(a[ix(kReqRootAttrs, "pagg_id")], pagg) ||
            !opt_number(a[ix(kReqRootAttrs, "admin_cookie")], cookie) ||
            !same_cookie(pagg, cookie)) {
          return;
        }
        r.pagg_id = pagg ? pagg : cookie;
        req->body = std::move(r);
        break;
      }
      default: break;
    }
  }

  bool same_cookie(const std::optional<std::uint64_t>& pagg,
                   const std::optional<std::uint64_t>& cookie) {
    if (pagg && cookie && *pagg != *cookie) {
      fail(Code::kInvalidValue, "pagg_id and admin_cookie differ");
      return false;
    }
    return true;
  }

  void on_start(Ctx ctx, Ctx parent) {
    const DecodeAttr* a = attrs;
    switch (ctx) {
      case Ctx::kDocument:
      case Ctx::kRespRoot:
      case Ctx::kReqRoot:
      case Ctx::kCount: return;

      case Ctx::kRespData: {
        Method m{};
        if (!enum_value(a[ix(kRespDataAttrs, "status")], resp->status) ||
            !enum_value(a[ix(kRespDataAttrs, "method")], m) ||
            !opt_enum(a[ix(kRespDataAttrs, "error_class")], resp->error_class) ||
            !opt_enum(a[ix(kRespDataAttrs, "error_source")], resp->error_source)) {
          return;
        }
        resp->method = m;
        seen_status = resp->status;
        // A method read as UNDEFINED that did not say so (tolerant mode): its
        // body, if any, tells what the answer is.
        const bool method_unknown =
            m == Method::kUndefined && a[ix(kRespDataAttrs, "method")].value != to_string(Method::kUndefined);
        const DecodeAttr& t = a[ix(kRespDataAttrs, "type")];
        if (t.present) {
          if (auto qt = parse_enum<QueryType>(t.value)) {
            resp->type = qt;
          } else if (opt.strict) {
            fail(Code::kInvalidValue, "ResponseData@type: unknown value " + quote(t.value));
            return;
          } else {
            warn("ResponseData@type: unknown value " + quote(t.value) + " (ignored)");
          }
        }
        ops = method_unknown ? kOpAny : op_of(m, m == Method::kQuery ? resp->type : std::nullopt);
        if (failure_only_protocol && resp->status == ResponseStatus::kSuccess) {
          fail(Code::kUnsupportedProtocol,
               resp->protocol.empty() ? std::string("protocol \"\" is allowed on a FAILURE response only")
                                      : "unsupported BASIL protocol " + quote(resp->protocol) +
                                            " (allowed on a FAILURE response only)");
        }
        return;
      }
      case Ctx::kMessage:
        msg_text.clear();
        enum_value(a[ix(kMessageAttrs, "severity")], msg_severity);
        return;

      case Ctx::kEngine: {
        EngineInfo* e = body<EngineInfo>();
        if (e == nullptr) return;
        str(a[ix(kEngineAttrs, "name")], e->name);
        str(a[ix(kEngineAttrs, "version")], e->version);
        const DecodeAttr& bs = a[ix(kEngineAttrs, "basil_support")];
        if (bs.present) {
          std::string_view rest = bs.value;
          while (!rest.empty()) {
            const std::size_t comma = rest.find(',');
            const std::string_view item = trim(rest.substr(0, comma));
            if (!item.empty()) e->basil_support.emplace_back(item);
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
          }
        }
        return;
      }

      case Ctx::kInventory:
        inv = body<Inventory>();
        if (inv == nullptr) return;
        inv->has_node_array = false;
        inv->has_reservation_array = false;
        opt_str(a[ix(kInventoryAttrs, "mpp_host")], inv->mpp_host);
        if (!opt_number(a[ix(kInventoryAttrs, "timestamp")], inv->timestamp)) return;
        opt_number(a[ix(kInventoryAttrs, "cpcu")], inv->cpcu);
        return;
      case Ctx::kNodeArray:
        inv->has_node_array = true;
        if (!opt_number(a[ix(kNodeArrayAttrs, "changecount")], inv->changecount)) return;
        opt_number(a[ix(kNodeArrayAttrs, "schedchangecount")], inv->schedchangecount);
        return;
      case Ctx::kNode: {
        node = &inv->nodes.emplace_back();
        if (!number(a[ix(kNodeAttrs, "node_id")], node->node_id)) return;
        str(a[ix(kNodeAttrs, "name")], node->name);
        if (!enum_value(a[ix(kNodeAttrs, "architecture")], node->architecture) ||
            !enum_value(a[ix(kNodeAttrs, "role")], node->role) ||
            !enum_value(a[ix(kNodeAttrs, "state")], node->state)) {
          return;
        }
        opt_number(a[ix(kNodeAttrs, "router_id")], node->router_id);
        return;
      }
      case Ctx::kProcArray:
        procs = parent == Ctx::kNode ? &node->processors : &seg->processors;
        reserve_hint(*procs, hints.procs);
        return;
      case Ctx::kProcessor:
        proc = &procs->emplace_back();
        if (!number(a[ix(kProcessorAttrs, "ordinal")], proc->ordinal) ||
            !enum_value(a[ix(kProcessorAttrs, "architecture")], proc->architecture)) {
          return;
        }
        number(a[ix(kProcessorAttrs, "clock_mhz")], proc->clock_mhz);
        return;
      case Ctx::kProcAlloc: {
        std::uint64_t id = 0;
        if (number(a[ix(kResIdAttrs, "reservation_id")], id)) proc->allocations.push_back(id);
        return;
      }
      case Ctx::kMemArray: mems = parent == Ctx::kNode ? &node->memory : &seg->memory; return;
      case Ctx::kMemory:
        mem = &mems->emplace_back();
        if (!enum_value(a[ix(kMemoryAttrs, "type")], mem->type) ||
            !number(a[ix(kMemoryAttrs, "page_size_kb")], mem->page_size_kb)) {
          return;
        }
        number(a[ix(kMemoryAttrs, "page_count")], mem->page_count);
        return;
      case Ctx::kMemAlloc: {
        MemoryAllocation& m = mem->allocations.emplace_back();
        if (!number(a[ix(kMemAllocAttrs, "reservation_id")], m.reservation_id)) return;
        number(a[ix(kMemAllocAttrs, "page_count")], m.page_count);
        return;
      }
      case Ctx::kLabelArray: labels = parent == Ctx::kNode ? &node->labels : &seg->labels; return;
      case Ctx::kLabel: {
        Label& l = labels->emplace_back();
        str(a[ix(kLabelAttrs, "name")], l.name);
        if (!enum_value(a[ix(kLabelAttrs, "type")], l.type)) return;
        enum_value(a[ix(kLabelAttrs, "disposition")], l.disposition);
        return;
      }
      case Ctx::kSegArray: reserve_hint(node->segments, hints.segments); return;
      case Ctx::kSocketArray: reserve_hint(node->sockets, hints.sockets); return;
      case Ctx::kSockSegArray: reserve_hint(socket->segments, hints.segments); return;
      case Ctx::kCuArray: reserve_hint(seg->compute_units, hints.cus); return;
      case Ctx::kAccelArray:
      case Ctx::kAppArray:
      case Ctx::kCmdArray:
      case Ctx::kNodeSummary: return;
      case Ctx::kSegment:
        seg = &node->segments.emplace_back();
        number(a[ix(kOrdinalAttrs, "ordinal")], seg->ordinal);
        return;
      case Ctx::kSocket:
        socket = &node->sockets.emplace_back();
        if (!number(a[ix(kSocketAttrs, "ordinal")], socket->ordinal) ||
            !enum_value(a[ix(kSocketAttrs, "architecture")], socket->architecture)) {
          return;
        }
        number(a[ix(kSocketAttrs, "clock_mhz")], socket->clock_mhz);
        return;
      case Ctx::kSockSegment:
        seg = &socket->segments.emplace_back();
        number(a[ix(kOrdinalAttrs, "ordinal")], seg->ordinal);
        return;
      case Ctx::kCu:
        cu = &seg->compute_units.emplace_back();
        number(a[ix(kOrdinalAttrs, "ordinal")], cu->ordinal);
        return;
      case Ctx::kCuProcArray:
        procs = &cu->processors;
        reserve_hint(*procs, hints.procs);
        return;
      case Ctx::kCuProcessor:
        proc = &procs->emplace_back();
        number(a[ix(kOrdinalAttrs, "ordinal")], proc->ordinal);
        return;
      case Ctx::kAccel:
        accel = &node->accelerators.emplace_back();
        if (!number(a[ix(kAccelAttrs, "ordinal")], accel->ordinal)) return;
        str(a[ix(kAccelAttrs, "type")], accel->type);
        if (!enum_value(a[ix(kAccelAttrs, "state")], accel->state)) return;
        str(a[ix(kAccelAttrs, "family")], accel->family);
        if (!number(a[ix(kAccelAttrs, "memory_mb")], accel->memory_mb)) return;
        number(a[ix(kAccelAttrs, "clock_mhz")], accel->clock_mhz);
        return;
      case Ctx::kAccelAlloc: {
        std::uint64_t id = 0;
        if (number(a[ix(kResIdAttrs, "reservation_id")], id)) accel->allocations.push_back(id);
        return;
      }
      case Ctx::kInvResArray: inv->has_reservation_array = true; return;
      case Ctx::kInvRes:
        resv = &inv->reservations.emplace_back();
        if (!number(a[ix(kInvResAttrs, "reservation_id")], resv->reservation_id)) return;
        str(a[ix(kInvResAttrs, "user_name")], resv->user_name);
        str(a[ix(kInvResAttrs, "account_name")], resv->account_name);
        if (!opt_number(a[ix(kInvResAttrs, "time_stamp")], resv->time_stamp)) return;
        opt_str(a[ix(kInvResAttrs, "batch_id")], resv->batch_id);
        if (!opt_enum(a[ix(kInvResAttrs, "reservation_mode")], resv->reservation_mode)) return;
        opt_enum(a[ix(kInvResAttrs, "gpc_mode")], resv->gpc_mode);
        return;
      case Ctx::kApp:
        app = &resv->applications.emplace_back();
        if (!number(a[ix(kAppAttrs, "application_id")], app->application_id) ||
            !number(a[ix(kAppAttrs, "user_id")], app->user_id) ||
            !number(a[ix(kAppAttrs, "group_id")], app->group_id)) {
          return;
        }
        number(a[ix(kAppAttrs, "time_stamp")], app->time_stamp);
        return;
      case Ctx::kCmd: {
        Command& c = app->commands.emplace_back();
        if (!number(a[ix(kCmdAttrs, "width")], c.width) ||
            !number(a[ix(kCmdAttrs, "depth")], c.depth) ||
            !number(a[ix(kCmdAttrs, "nppn")], c.nppn) ||
            !number(a[ix(kCmdAttrs, "memory")], c.memory)) {
          return;
        }
        str(a[ix(kCmdAttrs, "architecture")], c.architecture);
        str(a[ix(kCmdAttrs, "cmd")], c.cmd);
        return;
      }

      case Ctx::kSummary:
        sum = body<Summary>();
        if (sum == nullptr) return;
        opt_str(a[ix(kSummaryAttrs, "mpp_host")], sum->mpp_host);
        if (!opt_number(a[ix(kSummaryAttrs, "timestamp")], sum->timestamp) ||
            !number(a[ix(kSummaryAttrs, "changecount")], sum->changecount)) {
          return;
        }
        number(a[ix(kSummaryAttrs, "schedchangecount")], sum->schedchangecount);
        return;
      case Ctx::kNsUp:
      case Ctx::kNsDown: {
        text.clear();
        nse = &sum->nodes.emplace_back();
        nse->up = ctx == Ctx::kNsUp;
        static_assert(ix(kNsUpAttrs, "count") == ix(kNsDownAttrs, "count"));
        if (!enum_value(a[ix(kNsUpAttrs, "role")], nse->role) ||
            !enum_value(a[ix(kNsUpAttrs, "architecture")], nse->architecture) ||
            !number(a[ix(kNsUpAttrs, "count")], nse->count)) {
          return;
        }
        if (ctx == Ctx::kNsDown) {
          if (!enum_value(a[ix(kNsDownAttrs, "state")], nse->state)) return;
          if (nse->state == NodeState::kUp) {
            fail(Code::kInvalidValue, "Down@state: a Down entry cannot be UP");
          }
        }
        return;
      }
      case Ctx::kAccelSummary: sum->has_accel_summary = true; return;
      case Ctx::kAsAccel:
        as_total = &sum->accel_totals.emplace_back();
        str(a[ix(kAsTotalAttrs, "type")], as_total->type);
        str(a[ix(kAsTotalAttrs, "family")], as_total->family);
        number(a[ix(kAsTotalAttrs, "count")], as_total->count);
        return;
      case Ctx::kAsUp:
      case Ctx::kAsDown:
      case Ctx::kAsAccelUp:
      case Ctx::kAsAccelDown: {
        text.clear();
        ase = &sum->accels.emplace_back();
        ase->up = ctx == Ctx::kAsUp || ctx == Ctx::kAsAccelUp;
        if (ctx == Ctx::kAsAccelUp || ctx == Ctx::kAsAccelDown) {
          ase->type = as_total->type;
          ase->family = as_total->family;
        }
        // The four tables share the order type, family, count[, state].
        static_assert(ix(kAsTotalAttrs, "count") == 2 && ix(kAsDownAttrs, "count") == 2 &&
                      ix(kAsAccelUpAttrs, "count") == 2 && ix(kAsAccelDownAttrs, "count") == 2 &&
                      ix(kAsDownAttrs, "state") == 3 && ix(kAsAccelDownAttrs, "state") == 3 &&
                      ix(kAsAccelUpAttrs, "type") == 0 && ix(kAsAccelUpAttrs, "family") == 1);
        str(a[0], ase->type);
        str(a[1], ase->family);
        if (!number(a[2], ase->count)) return;
        if (!ase->up) {
          if (!enum_value(a[3], ase->state)) return;
          if (ase->state == AccelState::kUp) {
            fail(Code::kInvalidValue, "Down@state: a Down entry cannot be UP");
          }
        }
        return;
      }

      case Ctx::kRdResArray:
      case Ctx::kRdAppArray: {
        const bool reservations = ctx == Ctx::kRdResArray;
        if (resp->method == Method::kSwitch) {
          Switched* s = body<Switched>();
          if (s != nullptr) items = reservations ? &s->reservations : &s->applications;
        } else {
          StatusInfo* s = body<StatusInfo>();
          if (s != nullptr) items = reservations ? &s->reservations : &s->applications;
        }
        return;
      }
      case Ctx::kRdRes:
      case Ctx::kRdApp: {
        static_assert(ix(kRdResAttrs, "status") == ix(kRdAppAttrs, "status"));
        ItemResult& it = items->emplace_back();
        static_assert(ix(kRdResAttrs, "reservation_id") == 0 &&
                      ix(kRdAppAttrs, "application_id") == 0);
        if (!number(a[0], it.id)) return;
        enum_value(a[ix(kRdResAttrs, "status")], it.status);
        return;
      }

      case Ctx::kReserved:
        reserved = body<Reserved>();
        if (reserved == nullptr) return;
        if (!number(a[ix(kReservedAttrs, "reservation_id")], reserved->reservation_id) ||
            !opt_number(a[ix(kReservedAttrs, "admin_cookie")], reserved->admin_cookie)) {
          return;
        }
        opt_number(a[ix(kReservedAttrs, "alloc_cookie")], reserved->alloc_cookie);
        return;
      case Ctx::kResvNodeArray: reserved->has_reserved_nodes = true; return;
      case Ctx::kResvNode: {
        std::uint32_t nid = 0;
        if (number(a[ix(kResvNodeAttrs, "node_id")], nid)) reserved->reserved_nodes.push_back(nid);
        return;
      }
      case Ctx::kResvNodes:
        text.clear();
        reserved->has_reserved_nodes = true;
        return;
      case Ctx::kConfirmed: {
        Confirmed* c = body<Confirmed>();
        if (c == nullptr) return;
        if (!opt_number(a[ix(kConfirmedAttrs, "reservation_id")], c->reservation_id)) return;
        opt_number(a[ix(kConfirmedAttrs, "pagg_id")], c->pagg_id);
        return;
      }
      case Ctx::kReleased: {
        Released* r = body<Released>();
        if (r == nullptr) return;
        if (!opt_number(a[ix(kReleasedAttrs, "reservation_id")], r->reservation_id)) return;
        opt_number(a[ix(kReleasedAttrs, "claims")], r->claims);
        return;
      }

      // Requests.
      case Ctx::kReqInventory: return;
      case Ctx::kReqNodeArray: {
        iq_node_array = true;
        const DecodeAttr& cc = a[ix(kReqNodeArrayAttrs, "changecount")];
        if (cc.present && number(cc, iq->changecount)) iq_changecount = true;
        return;
      }
      case Ctx::kReqResArray: iq_res_array = true; return;
      case Ctx::kQsResArray:
      case Ctx::kQsAppArray:
      case Ctx::kSwResArray:
      case Ctx::kSwAppArray:
      case Ctx::kMemParamArray:
      case Ctx::kLabelParamArray:
      case Ctx::kNodeParamArray:
      case Ctx::kAccelParamArray: return;
      case Ctx::kQsRes: {
        std::uint64_t id = 0;
        if (number(a[ix(kResIdAttrs, "reservation_id")], id)) sq->reservation_ids.push_back(id);
        return;
      }
      case Ctx::kQsApp: {
        std::uint64_t id = 0;
        if (number(a[ix(kAppIdAttrs, "application_id")], id)) sq->application_ids.push_back(id);
        return;
      }
      case Ctx::kSwRes:
      case Ctx::kSwApp: {
        static_assert(ix(kSwResAttrs, "action") == ix(kSwAppAttrs, "action"));
        SwitchItem& it = (ctx == Ctx::kSwRes ? sw->reservations : sw->applications).emplace_back();
        static_assert(ix(kSwResAttrs, "reservation_id") == 0 &&
                      ix(kSwAppAttrs, "application_id") == 0);
        if (!number(a[0], it.id)) return;
        enum_value(a[ix(kSwResAttrs, "action")], it.action);
        return;
      }
      case Ctx::kRpArray:
        str(a[ix(kRpArrayAttrs, "user_name")], reserve->user_name);
        opt_str(a[ix(kRpArrayAttrs, "batch_id")], reserve->batch_id);
        opt_str(a[ix(kRpArrayAttrs, "account_name")], reserve->account_name);
        return;
      case Ctx::kRp:
        rp = &reserve->params.emplace_back();
        str(a[ix(kRpAttrs, "architecture")], rp->architecture);
        if (!number(a[ix(kRpAttrs, "width")], rp->width) ||
            !opt_number(a[ix(kRpAttrs, "depth")], rp->depth) ||
            !opt_number(a[ix(kRpAttrs, "nppn")], rp->nppn) ||
            !opt_number(a[ix(kRpAttrs, "npps")], rp->npps) ||
            !opt_number(a[ix(kRpAttrs, "nspn")], rp->nspn) ||
            !opt_number(a[ix(kRpAttrs, "nppcu")], rp->nppcu) ||
            !opt_enum(a[ix(kRpAttrs, "reservation_mode")], rp->reservation_mode) ||
            !opt_enum(a[ix(kRpAttrs, "gpc_mode")], rp->gpc_mode) ||
            !opt_number(a[ix(kRpAttrs, "oscpn")], rp->oscpn) ||
            !opt_number(a[ix(kRpAttrs, "p-state")], rp->p_state) ||
            !opt_enum(a[ix(kRpAttrs, "p-governor")], rp->p_governor)) {
          return;
        }
        opt_str(a[ix(kRpAttrs, "segments")], rp->segments);
        return;
      case Ctx::kMemParam: {
        MemoryParam& m = rp->memory.emplace_back();
        if (!enum_value(a[ix(kMemParamAttrs, "type")], m.type)) return;
        number(a[ix(kMemParamAttrs, "size_mb")], m.size_mb);
        return;
      }
      case Ctx::kLabelParam: {
        LabelParam& l = rp->labels.emplace_back();
        str(a[ix(kLabelParamAttrs, "name")], l.name);
        if (!enum_value(a[ix(kLabelParamAttrs, "type")], l.type)) return;
        enum_value(a[ix(kLabelParamAttrs, "disposition")], l.disposition);
        return;
      }
      case Ctx::kNodeParam: text.clear(); return;
      case Ctx::kAccelParam: {
        AccelParam& p = rp->accelerators.emplace_back();
        str(a[ix(kAccelParamAttrs, "type")], p.type);
        opt_str(a[ix(kAccelParamAttrs, "family")], p.family);
        opt_number(a[ix(kAccelParamAttrs, "memory_mb")], p.memory_mb);
        return;
      }
    }
  }

  void end(const xmlChar* localname) {
    (void)localname;
    if (failed) return;
    if (depth > 0) --depth;
    text_run = 0;
    if (skip > 0) {
      --skip;
      return;
    }
    if (stack.empty()) return;
    const Frame& f = stack.back();
    const Ctx parent = stack.size() > 1 ? stack[stack.size() - 2].ctx : Ctx::kDocument;
    if (!check_required_children(f)) return;
    on_end(f.ctx, parent);
    if (failed) return;
    stack.pop();
  }

  bool check_required_children(const Frame& f) {
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

  void on_end(Ctx ctx, Ctx parent) {
    switch (ctx) {
      case Ctx::kProcArray:
      case Ctx::kCuProcArray: hints.procs = procs->size(); return;
      case Ctx::kCuArray: hints.cus = seg->compute_units.size(); return;
      case Ctx::kSegArray: hints.segments = node->segments.size(); return;
      case Ctx::kSockSegArray: hints.segments = socket->segments.size(); return;
      case Ctx::kSocketArray: hints.sockets = node->sockets.size(); return;
      case Ctx::kRespRoot:
      case Ctx::kReqRoot: root_done = true; return;
      case Ctx::kMessage:
        if (parent == Ctx::kRespData) {
          resp->messages.push_back(Message{msg_severity, msg_text});
        }
        msg_text.clear();
        return;
      case Ctx::kNsUp:
      case Ctx::kNsDown: nid_list(nse->nids); return;
      case Ctx::kAsUp:
      case Ctx::kAsDown:
      case Ctx::kAsAccelUp:
      case Ctx::kAsAccelDown: nid_list(ase->nids); return;
      case Ctx::kResvNodes: {
        NidList l;
        if (!nid_list(l)) return;
        const std::vector<std::uint32_t> nids = l.expand();
        reserved->reserved_nodes.insert(reserved->reserved_nodes.end(), nids.begin(), nids.end());
        return;
      }
      case Ctx::kNodeParam: {
        NidList l;
        if (nid_list(l)) rp->nodes.push_back(std::move(l));
        return;
      }
      case Ctx::kReqInventory:
        if (iq_node_array && iq_changecount) {
          iq->form = InventoryQuery::Form::kNodesSince;
        } else if (!iq_node_array && iq_res_array) {
          iq->form = InventoryQuery::Form::kReservationsOnly;
        } else {
          iq->form = InventoryQuery::Form::kFull;
          iq->changecount = 0;
        }
        return;
      default: return;
    }
  }

  void characters(const xmlChar* ch, int len) {
    if (failed || len <= 0) return;
    const auto n = static_cast<std::size_t>(len);
    text_run += n;
    if (text_run > opt.max_text_bytes) {
      text_too_long();
      return;
    }
    if (skip > 0 || stack.empty()) return;
    Frame& f = stack.back();
    const std::string_view chunk(reinterpret_cast<const char*>(ch), n);
    switch (ctx_spec(f.ctx).text) {
      case Text::kData: text.append(chunk); return;
      case Text::kMessage: msg_text.append(chunk); return;
      case Text::kNone: break;
    }
    if (!all_space(chunk)) stray_text(f, chunk);
  }

  [[gnu::cold]] [[gnu::noinline]] void text_too_long() {
    fail(Code::kLimitExceeded,
         "text longer than max_text_bytes (" + std::to_string(opt.max_text_bytes) + ")");
  }

  [[gnu::cold]] [[gnu::noinline]] void stray_text(Frame& f, std::string_view chunk) {
    std::string m = "text " + quote(trim(chunk)) + " is not allowed in " + std::string(f.name);
    if (opt.strict) {
      fail(Code::kStructure, std::move(m));
    } else if (!f.text_warned) {
      f.text_warned = true;
      warn(m + " (ignored)");
    }
  }

  // ------------------------------------------------------------ SAX glue
  // No exception may cross libxml2's C frames: each callback catches all.

  static Impl* self(void* ud) { return static_cast<Impl*>(ud); }

  void out_of_memory() { fail(Code::kInternal, "out of memory while decoding"); }

  static void sax_start(void* ud, const xmlChar* localname, const xmlChar* prefix,
                        const xmlChar* uri, int /*nb_namespaces*/, const xmlChar** /*namespaces*/,
                        int nb_attributes, int /*nb_defaulted*/, const xmlChar** attributes) {
    Impl* d = self(ud);
    try {
      d->start(localname, prefix, uri, nb_attributes, attributes);
    } catch (...) {
      d->out_of_memory();
    }
    d->stop_if_failed();
  }

  static void sax_end(void* ud, const xmlChar* localname, const xmlChar* /*prefix*/,
                      const xmlChar* /*uri*/) {
    Impl* d = self(ud);
    try {
      d->end(localname);
    } catch (...) {
      d->out_of_memory();
    }
    d->stop_if_failed();
  }

  static void sax_characters(void* ud, const xmlChar* ch, int len) {
    Impl* d = self(ud);
    try {
      d->characters(ch, len);
    } catch (...) {
      d->out_of_memory();
    }
  }

  void refuse(std::string message, bool stop) {
    fail(Code::kRefused, std::move(message));
    if (stop) stop_if_failed();
  }

  // Called once the XML declaration is read. Only the encodings libxml2
  // decodes with its own code are read (UTF-8, UTF-16, ISO-8859-1, ASCII).
  // Any other goes through iconv or ICU, and libxml2's push parser then
  // handles a conversion error differently depending on where the chunks end
  // (the response fuzzer found a document that decoded whole and was refused
  // in two chunks). BASIL documents are UTF-8.
  static void sax_start_document(void* ud) {
    Impl* d = self(ud);
    const xmlChar* declared = d->ctxt ? d->ctxt->encoding : nullptr;
    if (declared == nullptr) return;
    // A handler of libxml2's own has an input function; iconv and ICU ones
    // have none.
    xmlCharEncodingHandlerPtr handler = xmlFindCharEncodingHandler(reinterpret_cast<const char*>(declared));
    const bool own = handler != nullptr && handler->input != nullptr;
    if (handler != nullptr) xmlCharEncCloseFunc(handler);
    if (own) return;
    try {
      d->refuse("encoding \"" + std::string(sv(declared)) +
                    "\" refused: BASIL documents are UTF-8 (UTF-16, ISO-8859-1 and ASCII are also read)",
                true);
    } catch (...) {
      d->out_of_memory();
      d->stop_if_failed();
    }
  }

  static void sax_subset(void* ud, const xmlChar* name, const xmlChar* /*external_id*/,
                         const xmlChar* /*system_id*/) {
    Impl* d = self(ud);
    try {
      d->refuse("DOCTYPE " + std::string(sv(name)) + " refused: BASIL documents have none", true);
    } catch (...) {
      d->out_of_memory();
      d->stop_if_failed();
    }
  }

  static void sax_entity_decl(void* ud, const xmlChar* name, int, const xmlChar*, const xmlChar*,
                              xmlChar*) {
    Impl* d = self(ud);
    try {
      d->refuse("entity declaration " + std::string(sv(name)) + " refused", true);
    } catch (...) {
      d->out_of_memory();
      d->stop_if_failed();
    }
  }

  static void sax_unparsed_entity_decl(void* ud, const xmlChar*, const xmlChar*, const xmlChar*,
                                       const xmlChar*) {
    Impl* d = self(ud);
    try {
      d->refuse("entity declaration refused", true);
    } catch (...) {
      d->out_of_memory();
      d->stop_if_failed();
    }
  }

  static void sax_notation_decl(void* ud, const xmlChar*, const xmlChar*, const xmlChar*) {
    Impl* d = self(ud);
    try {
      d->refuse("notation declaration refused", true);
    } catch (...) {
      d->out_of_memory();
      d->stop_if_failed();
    }
  }

  static void sax_element_decl(void* ud, const xmlChar*, int, xmlElementContentPtr) {
    Impl* d = self(ud);
    try {
      d->refuse("element declaration refused", true);
    } catch (...) {
      d->out_of_memory();
      d->stop_if_failed();
    }
  }

  static void sax_attribute_decl(void* ud, const xmlChar*, const xmlChar*, int, int, const xmlChar*,
                                 xmlEnumerationPtr tree) {
    if (tree != nullptr) xmlFreeEnumeration(tree);  // ours to free, as in libxml2's SAX2
    Impl* d = self(ud);
    try {
      d->refuse("attribute declaration refused", true);
    } catch (...) {
      d->out_of_memory();
      d->stop_if_failed();
    }
  }

  // Called only for names that are not predefined (libxml2 resolves &lt;
  // &gt; &amp; &apos; &quot; itself). The parser is not stopped here: it
  // reports the undeclared entity as fatal and feed() stops it.
  static xmlEntityPtr sax_get_entity(void* ud, const xmlChar* name) {
    if (xmlEntityPtr predefined = xmlGetPredefinedEntity(name)) return predefined;
    Impl* d = self(ud);
    try {
      d->refuse("entity reference &" + std::string(sv(name)) +
                    "; refused: only the predefined entities are allowed",
                false);
    } catch (...) {
      d->out_of_memory();
    }
    return nullptr;
  }

  static xmlParserInputPtr sax_resolve_entity(void* ud, const xmlChar*, const xmlChar* system_id) {
    Impl* d = self(ud);
    try {
      d->refuse("external entity " + quote(sv(system_id)) + " refused", false);
    } catch (...) {
      d->out_of_memory();
    }
    return nullptr;
  }

  static void sax_reference(void* ud, const xmlChar* name) {
    Impl* d = self(ud);
    try {
      d->refuse("entity reference &" + std::string(sv(name)) + "; refused", false);
    } catch (...) {
      d->out_of_memory();
    }
  }

  static void sax_error(void* ud, xmlErrorPtr err) {
    if (err == nullptr) return;
    Impl* d = self(ud);
    try {
      std::string m = err->message != nullptr ? std::string(err->message) : "XML error";
      while (!m.empty() && is_space(m.back())) m.pop_back();
      if (err->level == XML_ERR_WARNING) {
        d->warn_at(err->line, err->int2, "XML: " + m);
        return;
      }
      if (err->code == XML_ERR_USER_STOP) return;
      const Code code = err->code == XML_ERR_NO_MEMORY ? Code::kInternal : Code::kMalformed;
      if (d->failed && d->failed_while_finishing && d->status.code() != Code::kMalformed &&
          d->status.code() != Code::kRefused) {
        d->failed = false;  // the input is truncated: that is the error to report
      }
      d->fail_at(code, "not well-formed XML: " + m, err->line, err->int2);
    } catch (...) {
      d->out_of_memory();
    }
  }

  // ------------------------------------------------------------ driving

  Status feed(std::string_view chunk) {
    if (failed) return status;
    if (finished) return Status(Code::kInternal, "feed() after finish()");
    if (chunk.size() > opt.max_document_bytes - fed) {
      fail(Code::kLimitExceeded, "document larger than max_document_bytes (" +
                                     std::to_string(opt.max_document_bytes) + ")");
      stop_if_failed();
      return status;
    }
    fed += chunk.size();
    while (!chunk.empty()) {
      const std::size_t n = std::min(chunk.size(), kFeedPiece);
      const int rc = xmlParseChunk(ctxt.get(), chunk.data(), static_cast<int>(n), 0);
      if (!failed && rc != 0) {
        fail(Code::kMalformed, "not well-formed XML (libxml2 error " + std::to_string(rc) + ")");
      }
      if (failed) {
        stop_if_failed();
        return status;
      }
      chunk.remove_prefix(n);
    }
    return Status::ok();
  }

  Result<Decoded> finish() {
    if (failed) return status;
    if (finished) return Status(Code::kInternal, "finish() called twice");
    finished = true;
    finishing = true;
    const int rc = xmlParseChunk(ctxt.get(), nullptr, 0, 1);
    finishing = false;
    if (!failed && rc != 0) {
      fail(Code::kMalformed, "not well-formed XML (libxml2 error " + std::to_string(rc) + ")");
    }
    if (!failed && !root_done) {
      fail(Code::kMalformed,
           root_seen ? "document ends before its root element is closed" : "document is empty");
    }
    if (failed) {
      stop_if_failed();
      return status;
    }
    if (kind == DocumentKind::kRequest) {
      req->dialect = dialect;
    } else {
      resp->dialect = dialect;
    }
    return std::move(out);
  }
};

// ---------------------------------------------------------------- public API

Decoder::Decoder(DecodeOptions options, Expect expect)
    : impl_(std::make_unique<Impl>(options, expect)) {}

Decoder::~Decoder() = default;

Status Decoder::feed(std::string_view chunk) {
  try {
    return impl_->feed(chunk);
  } catch (...) {
    impl_->out_of_memory();
    return impl_->status;
  }
}

Result<Decoded> Decoder::finish() {
  try {
    return impl_->finish();
  } catch (...) {
    impl_->out_of_memory();
    return impl_->status;
  }
}

const std::optional<RequestEnvelope>& Decoder::request_envelope() const { return impl_->envelope; }

std::optional<ResponseStatus> Decoder::response_status() const { return impl_->seen_status; }

namespace {

// Feeds `xml` in small pieces until `known(decoder)` holds or it is all
// fed: a document's head comes first, so a few pieces are enough however
// long it is.
template <typename Known>
void feed_until(Decoder& d, std::string_view xml, Known known) {
  constexpr std::size_t kPiece = 4096;
  while (!xml.empty() && !known()) {
    const std::size_t n = std::min(xml.size(), kPiece);
    const bool fed = d.feed(xml.substr(0, n)).is_ok();
    xml.remove_prefix(n);
    if (!fed) return;
  }
  if (!known() && xml.empty()) (void)d.finish();
}

DecodeOptions head_options(std::string_view xml) {
  DecodeOptions o;
  o.max_document_bytes = xml.size();
  return o;
}

}  // namespace

std::optional<RequestEnvelope> read_request_envelope(std::string_view xml) {
  Decoder d(head_options(xml), Decoder::Expect::kRequest);
  feed_until(d, xml, [&] { return d.request_envelope().has_value(); });
  return d.request_envelope();
}

std::optional<ResponseStatus> read_response_status(std::string_view xml) {
  Decoder d(head_options(xml), Decoder::Expect::kResponse);
  feed_until(d, xml, [&] { return d.response_status().has_value(); });
  return d.response_status();
}

namespace {

Result<Decoded> decode_with(std::string_view xml, const DecodeOptions& options,
                            Decoder::Expect expect) {
  Decoder d(options, expect);
  while (!xml.empty()) {
    const std::size_t n = std::min(xml.size(), kDecodeChunk);
    Status s = d.feed(xml.substr(0, n));
    if (!s) return s;
    xml.remove_prefix(n);
  }
  return d.finish();
}

}  // namespace

Result<Decoded> decode(std::string_view xml, const DecodeOptions& options) {
  return decode_with(xml, options, Decoder::Expect::kAny);
}

Result<Response> decode_response(std::string_view xml, const DecodeOptions& options,
                                 std::vector<std::string>* warnings) {
  Result<Decoded> r = decode_with(xml, options, Decoder::Expect::kResponse);
  if (!r) return r.status();
  if (warnings != nullptr) *warnings = std::move(r->warnings);
  return std::move(r->response());
}

Result<Request> decode_request(std::string_view xml, const DecodeOptions& options,
                               std::vector<std::string>* warnings) {
  Result<Decoded> r = decode_with(xml, options, Decoder::Expect::kRequest);
  if (!r) return r.status();
  if (warnings != nullptr) *warnings = std::move(r->warnings);
  return std::move(r->request());
}

}  // namespace basil
