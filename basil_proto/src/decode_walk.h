// The decoder's walk over the structure tables (private to basil_proto):
// the state of one document being decoded, the value readers the element
// handlers use, and the walk itself, which decode_sax.cc drives from
// libxml2's SAX2 callbacks.
//
// decode_walk.cc checks each element against the tables (its place, its
// uniqueness, its dialect, its attributes) and calls the handler the tables
// name for its context (kCtxSpecs in decode_tables.h); the handlers, in
// decode_response.cc, decode_inventory.cc and decode_request.cc, fill the
// model. decode_root.cc reads the root element, which decides the kind of
// document, its dialect and its operation.
#pragma once

#include <libxml/parser.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include "basil_proto/codec.h"
#include "basil_proto/dialect.h"
#include "basil_proto/model.h"
#include "basil_proto/nidlist.h"
#include "basil_proto/status.h"
#include "basil_proto/src/decode_tables.h"

namespace basil::decode_detail {

inline constexpr std::size_t kMaxWarnings = 1000;
inline constexpr std::size_t kQuoteMax = 64;  // bytes of a bad value quoted in a message

inline std::string_view sv(const xmlChar* s) {
  return s == nullptr ? std::string_view{} : std::string_view(reinterpret_cast<const char*>(s));
}

inline std::string_view sv(const xmlChar* begin, const xmlChar* end) {
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

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// A value for a message, cut to kQuoteMax bytes.
inline std::string clip(std::string_view v) {
  if (v.size() <= kQuoteMax) return std::string(v);
  return std::string(v.substr(0, kQuoteMax)) + "...";
}

// A value quoted for a message, cut to kQuoteMax bytes.
inline std::string quote(std::string_view v) {
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

// One attribute of the element being started, in its context's table order.
struct DecodeAttr {
  std::string_view name;
  std::string_view value;
  bool present = false;
};

struct Walk {
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
  Decoder::Expect expect;
  // The parser of this document (owned by the decoder, decode_sax.cc): for
  // positions in messages, and stopped after the first error.
  xmlParserCtxt* parser = nullptr;

  Status status;
  bool failed = false;
  bool finished = false;
  bool root_seen = false;
  bool root_done = false;
  std::optional<RequestEnvelope> envelope;  // a BasilRequest's root start tag, as read
  std::optional<ResponseStatus> seen_status;  // ResponseData@status, once read

  std::size_t skip = 0;  // > 0: inside an unknown subtree, at this depth below it
  std::string skip_name;

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

  explicit Walk(DecodeOptions o, Decoder::Expect e) : opt(o), expect(e) { text.reserve(256); }

  // ------------------------------------------------------------ errors (decode_walk.cc)

  int line() const;
  int column() const;
  std::string path(std::string_view extra = {}) const;
  void fail_at(Code code, std::string message, int l, int c, std::string_view extra = {});
  // Records the first error. The parser is stopped by the caller (the
  // element callbacks and feed()), never from inside characters().
  void fail(Code code, std::string message, std::string_view extra = {});
  void stop_if_failed();
  void warn_at(int l, int c, std::string_view message);
  void warn(std::string_view message);
  std::string_view top_name() const { return stack.empty() ? "" : stack.back().name; }
  // The context of the open element's parent (kDocument for the root).
  Ctx parent_ctx() const { return stack.size() > 1 ? stack[stack.size() - 2].ctx : Ctx::kDocument; }
  std::string method_name() const;
  // Accepts an item of the given dialects in this document: upgrades 1.1 to
  // 1.1+ on a 1.1+ marker, else warns (tolerant) or fails (strict).
  [[gnu::cold]] [[gnu::noinline]] bool dialect_ok(DMask mask, std::string_view what);
  [[gnu::cold]] [[gnu::noinline]] void out_of_memory();

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

  // ------------------------------------------------------------ the walk (decode_walk.cc)

  // A start tag below the root, within the depth limit.
  void start(const xmlChar* localname, const xmlChar* prefix, const xmlChar* uri, int nb_attributes,
             const xmlChar** attributes);
  // An end tag, within the depth limit.
  void end();
  // Character data, within the text limit.
  void characters(std::string_view chunk);

  [[gnu::cold]] [[gnu::noinline]] void duplicate(std::string_view name, std::string_view parent);
  [[gnu::noinline]] const ElemSpec* no_edge(std::string_view name, const xmlChar* prefix,
                                            const xmlChar* uri, bool name_known_here,
                                            Ctx parent_ctx);
  static bool known_anywhere(std::string_view name);
  void unknown_element(std::string_view name, const xmlChar* prefix);
  bool unknown_attr(std::string_view name, const xmlChar* prefix, std::string_view why);
  // Fills attrs[] in the table order of the current context; checks
  // lengths, unknown names, dialects and required attributes.
  bool collect_attrs(int nb_attributes, const xmlChar** attributes);
  [[gnu::cold]] [[gnu::noinline]] void attr_too_long(std::string_view aname);
  [[gnu::cold]] [[gnu::noinline]] bool attr_of_other_method(std::string_view aname);
  [[gnu::cold]] [[gnu::noinline]] bool attr_dialect_ok(DMask mask, std::string_view aname);
  [[gnu::cold]] [[gnu::noinline]] void missing_attr(std::string_view aname);
  static void unescape_amp(std::string_view in, std::string& out);
  bool check_required_children(const Frame& f);
  [[gnu::cold]] [[gnu::noinline]] void stray_text(Frame& f, std::string_view chunk);

  // ------------------------------------------------------------ the root (decode_root.cc)

  void start_root(std::string_view name, bool namespaced, int nb_attributes,
                  const xmlChar** attributes);
  bool root_kind(std::string_view name, bool namespaced);
  bool set_protocol(std::string_view p);
  void note_envelope(int nb_attributes, const xmlChar** attributes);
  bool start_request_root(int nb_attributes, const xmlChar** attributes,
                          std::optional<std::string_view> method,
                          std::optional<std::string_view> type);
  void emplace_request_body(Method m, std::optional<QueryType> t);
  void request_root_attrs(Method m);
  bool root_ids(std::uint64_t& reservation_id, std::optional<std::uint64_t>& pagg);
  bool same_cookie(const std::optional<std::uint64_t>& pagg,
                   const std::optional<std::uint64_t>& cookie);
};

}  // namespace basil::decode_detail
