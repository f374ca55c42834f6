// A scheduler's raw BASIL calls through basild (apbasil_proxy's POST
// /v1/basil) and its apkill (POST /v1/apkill): sent on untouched, answered
// untouched, and learnt from. A forwarded RESERVE with a batch id is an
// intent first; a forwarded CONFIRM or RELEASE updates the reservation's
// record; a forwarded INVENTORY is streamed to the caller as it arrives and
// decoded beside the stream when basild's own node data is due a refresh.
// Each request and answer is decoded once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "basild/control/registry.h"
#include "basild/daemon/background_decoder.h"
#include "basild/daemon/call_parts.h"

namespace basild {

class Forwarder : public std::enable_shared_from_this<Forwarder> {
 public:
  Forwarder(CallParts parts, bool strict_decode);

  void forward(const control::Request& req, control::Responder reply);
  void apkill(const nlohmann::json& body, control::Responder reply);
  std::uint64_t inventories_decoded() const { return learner_.decoded(); }

 private:
  using Fail = std::function<control::Response(const basil::Status&)>;
  void answered(basil::Result<Forwarded> r, std::shared_ptr<const basil::Request> request,
                std::optional<std::int64_t> intent, control::Responder reply, Fail fail);
  void forward_streamed(const std::string& request, const RequestKind& kind, control::Responder reply, Fail fail);
  void reserve_answered(const basil::ReserveRequest& reserve, std::int64_t intent, const std::string& answer,
                        const basil::Response* resp, control::Responder reply, Fail fail);
  void learn_from_forward(const basil::Request& req, const basil::Response& resp);
  basil::Result<std::optional<ReservationRecord>> record_forwarded_reserve(std::int64_t intent,
                                                                          const basil::ReserveRequest& reserve,
                                                                          const basil::Response* resp);
  void learn_forwarded_release(std::uint64_t res_id, const basil::Response& resp);
  std::optional<basil::Reservation> batch_reservation_of(std::uint64_t apid) const;
  void note(const basil::Status& s);
  void audit_change(const control::PeerCredentials& peer, const basil::Request& request);
  void note_recorded(std::string_view call, std::uint64_t res_id, const basil::Status& s);

  CallParts parts_;
  // The tickets of the forwarded INVENTORYs being decoded, by a key the
  // decoder's callback carries.
  std::map<std::uint64_t, ChangeOrder::Ticket> learning_;
  std::uint64_t learning_key_ = 0;
  BackgroundDecoder learner_;
  basil::DecodeOptions decode_options_;
};

}  // namespace basild
