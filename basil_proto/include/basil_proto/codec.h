// The XML codec. No I/O: encoding turns a model into a string, decoding
// takes bytes in chunks of any size and returns a model.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "basil_proto/model.h"
#include "basil_proto/status.h"

namespace basil {

// ---------------------------------------------------------------- encoding

// Writes the request as apbasil lays out its XML: declaration line, one
// element per line, one space of indentation per depth, attributes in a
// fixed order, double quotes, empty arrays self-closing, every value
// escaped, at most one NodeParam per ReserveParam. Fails with
// kNotInDialect when the model asks the dialect for something it cannot say
// (nppcu > 0 before 1.3, SUMMARY before 1.3, SWITCH before 1.2, ...), with
// kInvalidText for text that is not valid UTF-8.
Result<std::string> encode_request(const Request& request);

// Writes the response in its dialect (response.dialect), with
// response.protocol on BasilResponse.
Result<std::string> encode_response(const Response& response);

// A part of a request that a dialect has no word for.
struct PartNotInDialect {
  std::string part;   // "SWITCH", "QUERY STATUS", "QUERY SUMMARY", "AccelParam", "ReserveParam@nppcu=2"
  std::string since;  // the dialects that have it: "1.2 onwards"
};

// The first part of `request` that dialect `d` has no word for, as the
// codec's tables say: its operation (QUERY SUMMARY: 1.3; QUERY STATUS and
// SWITCH: 1.2 onwards), or a resource a RESERVE places with (AccelParam: 1.2
// onwards; nppcu above 0, compute units: 1.3). nullopt when `d` has them
// all. encode_request() refuses these parts (kNotInDialect); a server whose
// answer is in `d` can neither carry them out nor answer them, so it refuses
// such a request before it acts. Bookkeeping that does not change what is
// done (batch_id at 1.0, nppcu 0: ALPS's default) is no such part.
std::optional<PartNotInDialect> part_not_in_dialect(const Request& request, Dialect d);

// ---------------------------------------------------------------- decoding

struct DecodeOptions {
  bool strict = false;  // unknown elements/attributes: error instead of warning
  std::size_t max_document_bytes = std::size_t{1} << 30;  // 1 GiB
  std::size_t max_depth = 64;
  std::size_t max_text_bytes = std::size_t{1} << 20;  // one attribute value or text node
  // Attributes of one element, namespace declarations included. BASIL's
  // largest element (ReserveParam) has 13; a start tag with more is refused
  // before libxml2 reads it (its duplicate check is quadratic).
  std::size_t max_attributes = 64;
};

enum class DocumentKind : std::uint8_t { kRequest, kResponse };

struct Decoded {
  DocumentKind kind = DocumentKind::kResponse;
  std::variant<Request, Response> document;
  std::vector<std::string> warnings;  // "LINE:COL: message"

  bool is_request() const { return kind == DocumentKind::kRequest; }
  const Request& request() const { return std::get<Request>(document); }
  const Response& response() const { return std::get<Response>(document); }
  Request& request() { return std::get<Request>(document); }
  Response& response() { return std::get<Response>(document); }
};

// A streaming decoder: feed() the bytes as they come, then finish(). After
// the first error every call returns that error. One decoder, one document.
class Decoder {
 public:
  enum class Expect : std::uint8_t { kAny, kRequest, kResponse };

  explicit Decoder(DecodeOptions options = {}, Expect expect = Expect::kAny);
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  Status feed(std::string_view chunk);
  Result<Decoded> finish();
  // Once a BasilRequest's root start tag has been read: what it says, even
  // when the document fails later (see read_request_envelope).
  const std::optional<RequestEnvelope>& request_envelope() const;
  // Once a BasilResponse's ResponseData start tag has been read: its status.
  std::optional<ResponseStatus> response_status() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The envelope of a BasilRequest, read no further than its root start tag:
// nullopt when `xml` ends before that tag is complete, is not XML up to
// there, or its root is not a BasilRequest. The rest of the document is not
// looked at, so this answers for a request that does not decode (or is over
// any size limit) as well. Unsupported protocols are returned as written.
std::optional<RequestEnvelope> read_request_envelope(std::string_view xml);

// The ResponseData@status of a BasilResponse, read no further than that
// start tag (a few hundred bytes of an answer of any size): nullopt when
// `xml` ends before it, is not XML up to there or is no BasilResponse.
std::optional<ResponseStatus> read_response_status(std::string_view xml);

// Whole-buffer conveniences over Decoder.
Result<Decoded> decode(std::string_view xml, const DecodeOptions& options = {});
Result<Decoded> decode(std::string_view xml, const DecodeOptions& options, Decoder::Expect expect);
Result<Response> decode_response(std::string_view xml, const DecodeOptions& options = {},
                                 std::vector<std::string>* warnings = nullptr);
Result<Request> decode_request(std::string_view xml, const DecodeOptions& options = {},
                               std::vector<std::string>* warnings = nullptr);

}  // namespace basil
