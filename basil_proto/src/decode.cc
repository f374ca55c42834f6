// The decoder's entry points over whole buffers: decode(), decode_request(),
// decode_response(), and the readers of a document's head. All go through
// Decoder (decode_sax.cc).
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "basil_proto/codec.h"
#include "basil_proto/model.h"
#include "basil_proto/status.h"

namespace basil {

namespace {

constexpr std::size_t kDecodeChunk = std::size_t{64} << 10;  // keeps libxml2's buffer small

}  // namespace

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

Result<Decoded> decode(std::string_view xml, const DecodeOptions& options, Decoder::Expect expect) {
  return decode_with(xml, options, expect);
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
