// The SAX glue of the decoder and its refusals of hostile input: libxml2's
// SAX2 push parser (never a DOM) with callbacks that apply the limits of
// DecodeOptions (depth, text and document size) and refuse DTDs, entities
// and foreign encodings, then hand each element and text node to the walk
// (decode_walk.h). No exception crosses libxml2's C frames: each callback
// catches all.
#include <libxml/SAX2.h>
#include <libxml/encoding.h>
#include <libxml/entities.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "basil_proto/codec.h"
#include "basil_proto/status.h"
#include "basil_proto/src/decode_prescan.h"
#include "basil_proto/src/decode_walk.h"

namespace basil {

namespace {

using namespace decode_detail;  // NOLINT: the decoder's private walk

constexpr std::size_t kFeedPiece = std::size_t{1} << 30;  // xmlParseChunk takes an int

struct CtxtDeleter {
  void operator()(xmlParserCtxt* c) const { xmlFreeParserCtxt(c); }
};
using CtxtPtr = std::unique_ptr<xmlParserCtxt, CtxtDeleter>;

std::once_flag g_libxml_init;

}  // namespace

struct Decoder::Impl : decode_detail::Walk {
  CtxtPtr ctxt;
  std::size_t fed = 0;       // bytes fed so far
  std::size_t depth = 0;     // open elements
  std::size_t text_run = 0;  // bytes of the current text node
  AttributeScan attribute_scan;

  Impl(DecodeOptions o, Expect e) : Walk(o, e), attribute_scan(o.max_attributes) {
    std::call_once(g_libxml_init, [] { xmlInitParser(); });

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
    parser = ctxt.get();
  }

  // ------------------------------------------------------------ SAX glue
  // No exception may cross libxml2's C frames: each callback catches all.

  static Impl* self(void* ud) { return static_cast<Impl*>(ud); }

  // ------------------------------------------------------------ limits

  // An element start within max_depth: true, else the document fails.
  bool enter() {
    ++depth;
    text_run = 0;
    return depth <= opt.max_depth;
  }

  void leave() {
    if (depth > 0) --depth;
    text_run = 0;
  }

  // Text within max_text_bytes (one text node, in however many pieces).
  bool text_fits(std::size_t n) {
    text_run += n;
    return text_run <= opt.max_text_bytes;
  }

  [[gnu::cold]] [[gnu::noinline]] void too_deep(std::string_view name) {
    fail(Code::kLimitExceeded,
         "elements nested deeper than max_depth (" + std::to_string(opt.max_depth) + ")",
         skip > 0 ? std::string_view{} : name);
  }

  [[gnu::cold]] [[gnu::noinline]] void too_many_attributes(const AttributeScan::Excess& e) {
    // Not fail_at(): the walk's path is where libxml2 has read to, which
    // is before this tag.
    if (failed) return;
    failed = true;
    failed_while_finishing = finishing;
    status = Status(Code::kLimitExceeded, "element " + e.element + " has more than max_attributes (" +
                                              std::to_string(opt.max_attributes) + ") attributes (byte " +
                                              std::to_string(e.offset) + ")");
  }

  [[gnu::cold]] [[gnu::noinline]] void text_too_long() {
    fail(Code::kLimitExceeded,
         "text longer than max_text_bytes (" + std::to_string(opt.max_text_bytes) + ")");
  }

  // ------------------------------------------------------------ elements and text

  void start_tag(const xmlChar* localname, const xmlChar* prefix, const xmlChar* uri,
                 int nb_attributes, const xmlChar** attributes) {
    if (failed) return;
    if (!enter()) {
      too_deep(sv(localname));
    } else if (stack.empty() && skip == 0) {
      start_root(sv(localname), prefix != nullptr || uri != nullptr, nb_attributes, attributes);
    } else {
      start(localname, prefix, uri, nb_attributes, attributes);
    }
  }

  void end_tag() {
    if (failed) return;
    leave();
    end();
  }

  void text_piece(const xmlChar* ch, int len) {
    if (failed || len <= 0) return;
    const auto n = static_cast<std::size_t>(len);
    if (!text_fits(n)) {
      text_too_long();
      return;
    }
    characters(std::string_view(reinterpret_cast<const char*>(ch), n));
  }

  static void sax_start(void* ud, const xmlChar* localname, const xmlChar* prefix,
                        const xmlChar* uri, int /*nb_namespaces*/, const xmlChar** /*namespaces*/,
                        int nb_attributes, int /*nb_defaulted*/, const xmlChar** attributes) {
    Impl* d = self(ud);
    try {
      d->start_tag(localname, prefix, uri, nb_attributes, attributes);
    } catch (...) {
      d->out_of_memory();
    }
    d->stop_if_failed();
  }

  static void sax_end(void* ud, const xmlChar* /*localname*/, const xmlChar* /*prefix*/,
                      const xmlChar* /*uri*/) {
    Impl* d = self(ud);
    try {
      d->end_tag();
    } catch (...) {
      d->out_of_memory();
    }
    d->stop_if_failed();
  }

  static void sax_characters(void* ud, const xmlChar* ch, int len) {
    Impl* d = self(ud);
    try {
      d->text_piece(ch, len);
    } catch (...) {
      d->out_of_memory();
    }
  }

  // ------------------------------------------------------------ refusals
  // BASIL documents have no DTD, no entity of their own and no encoding but
  // those libxml2 reads itself: anything else is refused (kRefused).

  void refuse(std::string message, bool stop) {
    fail(Code::kRefused, std::move(message));
    if (stop) stop_if_failed();
  }

  // Refuses what `message()` says; `stop`: stops the parser now (else
  // libxml2 reports a fatal error that feed() stops on).
  template <typename Message>
  static void refuse_from(void* ud, bool stop, Message message) {
    Impl* d = self(ud);
    try {
      d->refuse(message(), stop);
    } catch (...) {
      d->out_of_memory();
      if (stop) d->stop_if_failed();
    }
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
    refuse_from(ud, true, [&] { return std::string("DOCTYPE ") + std::string(sv(name)) + " refused: BASIL documents have none"; });
  }

  static void sax_entity_decl(void* ud, const xmlChar* name, int, const xmlChar*, const xmlChar*,
                              xmlChar*) {
    refuse_from(ud, true, [&] { return "entity declaration " + std::string(sv(name)) + " refused"; });
  }

  static void sax_unparsed_entity_decl(void* ud, const xmlChar*, const xmlChar*, const xmlChar*,
                                       const xmlChar*) {
    refuse_from(ud, true, [&] { return std::string("entity declaration refused"); });
  }

  static void sax_notation_decl(void* ud, const xmlChar*, const xmlChar*, const xmlChar*) {
    refuse_from(ud, true, [&] { return std::string("notation declaration refused"); });
  }

  static void sax_element_decl(void* ud, const xmlChar*, int, xmlElementContentPtr) {
    refuse_from(ud, true, [&] { return std::string("element declaration refused"); });
  }

  static void sax_attribute_decl(void* ud, const xmlChar*, const xmlChar*, int, int, const xmlChar*,
                                 xmlEnumerationPtr tree) {
    if (tree != nullptr) xmlFreeEnumeration(tree);  // ours to free, as in libxml2's SAX2
    refuse_from(ud, true, [&] { return std::string("attribute declaration refused"); });
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
    refuse_from(ud, false, [&] { return "external entity " + quote(sv(system_id)) + " refused"; });
    return nullptr;
  }

  static void sax_reference(void* ud, const xmlChar* name) {
    refuse_from(ud, false, [&] { return "entity reference &" + std::string(sv(name)) + "; refused"; });
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
    if (auto excess = attribute_scan.feed(chunk)) {
      too_many_attributes(*excess);
      stop_if_failed();
      return status;
    }
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

// ---------------------------------------------------------------- the decoder

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

}  // namespace basil
