// What the control routes answer with: a basil::Status as a JSON error
// (or, for a caller that passes BASIL answers on, as a FAILURE in the
// request's protocol), a reservation record as JSON, times as the API
// writes them, and the JSON bodies of the typed calls.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "basil_proto/model.h"
#include "basil_proto/status.h"
#include "basild/control/registry.h"
#include "basild/core/state_store.h"

namespace basild {

// Milliseconds since the epoch, as the API writes times.
std::int64_t epoch_ms(WallTime t);
// Seconds from `t` to `now`.
double age_seconds(WallTime t, WallTime now);

control::ResultCode result_of(const basil::Status& s);
control::Response error_reply(const basil::Status& s);
// basild's own answer to a forwarded request it could not carry out, for a
// caller that passes BASIL answers on (apbasil_proxy): a FAILURE in the
// request's protocol (its client stops on any other), SYSTEM, TRANSIENT or
// PERMANENT as the cause is; the HTTP status still says it is basild's.
control::Response basil_failure_reply(const std::string& request_xml, const basil::Status& s);

nlohmann::json record_json(const ReservationRecord& r);
// The JSON bodies of the typed calls, every key read or refused (an
// unknown key, a wrong type, a number past what basild carries: an error
// naming the key, kInvalidValue):
//   reserve {"batch_id", "user", "account"?, "params": [{"width" (1..2^63-1),
//            "depth"?, "nppn"?, "nppcu"? (0..2^32-1), "memory_mb"? (MB per PE),
//            "nodes"? (a NID list), "mode"? (EXCLUSIVE|SHARED)}]}
//   confirm {"reservation_id", "pagg_id"}      release {"reservation_id"}
basil::Result<basil::ReserveRequest> reserve_from_json(const nlohmann::json& j);
// A reserve as reserve_from_json reads it (the parameters of the job form
// too): what basild understood of a call, kept in its intent.
nlohmann::json reserve_to_json(const basil::ReserveRequest& q);
basil::Result<basil::ConfirmRequest> confirm_from_json(const nlohmann::json& j);
basil::Result<basil::ReleaseRequest> release_from_json(const nlohmann::json& j);
// A RELEASE of an id neither basild nor ALPS knew: 404, state "unknown".
control::Response unknown_release_reply(std::uint64_t res_id);

}  // namespace basild
