// How basil-emulator's apbasil mode puts its answer on standard output.
#pragma once

#include <string>

#include "basil_proto/model.h"
#include "basil_proto/status.h"

namespace emu {

// The response's document; when it cannot be encoded, a PERMANENT FAILURE
// in the same protocol saying so.
std::string encode_or_internal(const basil::Response& r);

// Writes the answer to `fd`. A QUERY INVENTORY's goes out in 64-KiB pieces
// as it is encoded, so that the reader takes the first megabytes while the
// rest is still being encoded (an 8.9 MB INVENTORY of a 2256-node XC30
// takes about 10 ms to encode); any other answer is written whole. An
// INVENTORY that cannot be encoded before its first piece left is answered
// as encode_or_internal does. Returns kTransport when the reader is gone,
// and the encoder's error when it failed after a piece left: the output is
// then a cut document, and no whole answer can follow it.
basil::Status write_answer(int fd, const basil::Response& r);

}  // namespace emu
