// One request of every kind (QUERY ENGINE, INVENTORY, SUMMARY, STATUS,
// RESERVE, CONFIRM, RELEASE, SWITCH) in every dialect that can say it, as
// the encoder writes them: the inputs of the tests that check what every
// program answers whatever a client asks.
#pragma once

#include <string>
#include <vector>

#include "basil_proto/codec.h"
#include "basil_proto/model.h"

namespace basil::testing {

struct KindRequest {
  std::string name;      // "RESERVE 1.3"
  std::string protocol;  // as sent
  Method method = Method::kUndefined;
  std::string xml;
};

inline std::vector<RequestBody> request_bodies() {
  ReserveRequest reserve;
  reserve.user_name = "alice";
  reserve.batch_id = "4242";
  ReserveParam p;
  p.width = 2;
  reserve.params.push_back(p);
  SwitchRequest sw;
  sw.reservations.push_back({7, SwitchAction::kOut});
  StatusQuery status;
  status.reservation_ids = {7};
  return {EngineQuery{},      InventoryQuery{}, SummaryQuery{}, status, reserve,
          ConfirmRequest{7, 4242, std::nullopt}, ReleaseRequest{7, std::nullopt}, sw};
}

// Every (kind, dialect) pair the encoder writes; pairs a dialect cannot say
// (SUMMARY before 1.3, SWITCH before 1.2, ...) are left out.
inline std::vector<KindRequest> every_request_kind() {
  std::vector<KindRequest> out;
  for (const Dialect d : kAllDialects) {
    for (const auto& body : request_bodies()) {
      Request r = make_request(d, body);
      auto xml = encode_request(r);
      if (auto* reserve = std::get_if<ReserveRequest>(&r.body); !xml && reserve != nullptr) {
        reserve->batch_id.reset();  // 1.0 has no batch_id
        xml = encode_request(r);
      }
      if (!xml) continue;
      std::string name(to_string(r.method()));
      if (r.query_type()) name += " " + std::string(to_string(*r.query_type()));
      name += " " + std::string(dialect_id(d));
      out.push_back({name, r.protocol, r.method(), *xml});
    }
  }
  return out;
}

}  // namespace basil::testing
