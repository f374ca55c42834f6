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
// A JSON reserve body: {"batch_id","user","account"?,"params":[{width,
// depth?, nppn?, nppcu?, memory_mb?, nodes?, mode?}]}.
basil::Result<basil::ReserveRequest> reserve_from_json(const nlohmann::json& j);
std::optional<std::uint64_t> json_uint(const nlohmann::json& j, const char* name);

}  // namespace basild
