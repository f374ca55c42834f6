// Encoding a response straight to its output, piece by piece, for a writer
// that should not wait for the whole document (an apbasil answering a full
// INVENTORY of a large machine: 8.9 MB that the reader can take while the
// rest is still being encoded). The bytes are those encode_response gives.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

#include "basil_proto/model.h"
#include "basil_proto/status.h"

namespace basil {

struct StreamedDocument {
  Status status;            // ok, or the first error (encoding, or `write` refusing a piece)
  std::size_t written = 0;  // bytes `write` took; after an error these are a cut document
};

// Encodes `response` as encode_response does and hands the document to
// `write` in pieces of about `piece_bytes` (at least 4 KiB) as it is
// written. `write` returns false when the output is gone; nothing more is
// handed to it and the result says kTransport. An encoding error found
// after the first piece leaves the output cut: the caller learns it from
// `written` > 0 and can no longer answer with a whole document.
StreamedDocument encode_response_streamed(const Response& response,
                                          const std::function<bool(std::string_view)>& write,
                                          std::size_t piece_bytes = 64 * 1024);

}  // namespace basil
