// The requests the conduit benchmarks send, and the reservation an answer
// grants.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "basil_proto/codec.h"

namespace basil::bench {

inline std::string request(basil::RequestBody body, basil::Dialect d = basil::Dialect::k1_3) {
  auto r = basil::encode_request(basil::make_request(d, std::move(body)));
  return r ? *r : std::string();
}

// A RESERVE of 24 nodes for batch id `<prefix>-<i>`.
inline std::string reserve_request(const std::string& prefix, int i) {
  basil::ReserveRequest r;
  r.user_name = "bench";
  r.batch_id = prefix + "-" + std::to_string(i);
  basil::ReserveParam p;
  p.width = 24;
  p.nppn = 24;
  r.params.push_back(p);
  return request(r);
}

inline std::string release_request(std::uint64_t rid) {
  basil::ReleaseRequest r;
  r.reservation_id = rid;
  return request(r);
}

inline std::optional<std::uint64_t> reservation_of(const std::string& xml) {
  auto r = basil::decode_response(xml);
  if (!r || !r->ok()) return std::nullopt;
  if (const auto* res = std::get_if<basil::Reserved>(&r->body)) return res->reservation_id;
  return std::nullopt;
}

}  // namespace basil::bench
