#include "emulator/answer.h"

#include <variant>

#include "basil_proto/codec.h"
#include "basil_proto/encode_stream.h"
#include "process/write_all.h"

namespace emu {

using basil::process::write_all;

std::string encode_or_internal(const basil::Response& r) {
  auto xml = basil::encode_response(r);
  if (xml) return std::move(*xml);
  basil::Response f = basil::make_failure(r.dialect, r.protocol, r.method, basil::ErrorClass::kPermanent,
                                          basil::ErrorSource::kInternal,
                                          "emulator could not encode its answer: " + xml.status().message());
  if (auto again = basil::encode_response(f)) return std::move(*again);
  // The encoder's message quoted what it could not write: say less.
  f.messages.front().text = "emulator could not encode its answer";
  if (auto plain = basil::encode_response(f)) return std::move(*plain);
  f.protocol.clear();  // only a protocol that is not valid text is left
  return basil::encode_response(f).value();
}

basil::Status write_answer(int fd, const basil::Response& r) {
  if (!std::holds_alternative<basil::Inventory>(r.body)) {
    if (!write_all(fd, encode_or_internal(r))) return basil::Status(basil::Code::kTransport, "standard output closed");
    return {};
  }
  bool gone = false;
  const auto d = basil::encode_response_streamed(r, [fd, &gone](std::string_view piece) {
    gone = !write_all(fd, piece);
    return !gone;
  });
  if (gone) return basil::Status(basil::Code::kTransport, "standard output closed");
  if (d.status.is_ok()) return {};
  if (d.written > 0) return d.status;
  if (!write_all(fd, encode_or_internal(r))) return basil::Status(basil::Code::kTransport, "standard output closed");
  return {};
}

}  // namespace emu
