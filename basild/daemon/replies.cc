#include "basild/daemon/replies.h"

#include "basil_proto/codec.h"
#include "basild/core/job_json.h"
#include "basild/core/json_args.h"

namespace basild {

using control::ResultCode;
using nlohmann::json;

std::int64_t epoch_ms(WallTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

double age_seconds(WallTime t, WallTime now) {
  return std::chrono::duration<double>(now - t).count();
}

ResultCode result_of(const basil::Status& s) {
  switch (s.code()) {
    case basil::Code::kOk: return ResultCode::kOk;
    case basil::Code::kAlpsTransient:
    case basil::Code::kTransport:
    case basil::Code::kTimeout:
    case basil::Code::kBusy: return ResultCode::kUnavailable;
    case basil::Code::kReservationGone:
    case basil::Code::kReservationUnknown: return ResultCode::kNotFound;
    case basil::Code::kAlpsPermanent: return ResultCode::kUpstream;
    case basil::Code::kInvalidValue:
    case basil::Code::kNotInDialect:
    case basil::Code::kInvalidText:
    case basil::Code::kStructure:
    case basil::Code::kUnknownName:
    case basil::Code::kLimitExceeded: return ResultCode::kBadRequest;
    default: return ResultCode::kError;
  }
}

control::Response error_reply(const basil::Status& s) {
  return control::Response::json(
      {{"error", s.to_string()}, {"code", basil::code_name(s.code())}, {"transient", s.transient()}},
      result_of(s));
}

control::Response basil_failure_reply(const std::string& request_xml, const basil::Status& s) {
  const auto envelope = basil::read_request_envelope(request_xml);
  auto failure = basil::failure_for(envelope ? &*envelope : nullptr,
                                    s.transient() ? basil::ErrorClass::kTransient : basil::ErrorClass::kPermanent,
                                    basil::ErrorSource::kSystem, "basild: " + s.to_string());
  auto xml = basil::encode_response(failure);
  if (!xml) {  // the cause's text was not writable (it quoted bad bytes)
    failure.messages.front().text = "basild: the call could not be carried out (" +
                                    std::string(basil::code_name(s.code())) + ")";
    xml = basil::encode_response(failure);
  }
  if (!xml) return error_reply(s);
  return control::Response::text(std::move(*xml), "application/xml", result_of(s));
}

json record_json(const ReservationRecord& r) {
  json j = {{"reservation_id", r.res_id}, {"batch_id", r.batch_id},   {"user", r.user},
            {"account", r.account},       {"nodes", r.nodes.format()}, {"node_count", r.nodes.size()},
            {"width", r.width},           {"depth", r.depth},          {"nppn", r.nppn},
            {"nppcu", r.nppcu},           {"state", res_state_name(r.state)},
            {"origin", res_origin_name(r.origin)}, {"created_ms", epoch_ms(r.created)}};
  if (r.pagg_id) j["pagg_id"] = *r.pagg_id;
  if (r.last_seen) j["last_seen_ms"] = epoch_ms(*r.last_seen);
  if (r.released) j["released_ms"] = epoch_ms(*r.released);
  return j;
}

namespace {

basil::Status bad(std::string m) { return basil::Status(basil::Code::kInvalidValue, std::move(m)); }

constexpr std::string_view kReserveKeys[] = {"batch_id", "user", "account", "params"};
constexpr std::string_view kParamKeys[] = {"width", "depth", "nppn", "nppcu", "memory_mb", "nodes", "mode"};

// One element of a reserve's "params", every key read or refused.
basil::Result<basil::ReserveParam> param_from_json(const json& p, const std::string& what) {
  if (!p.is_object()) return bad(what + ": must be an object");
  if (auto s = only_known_keys(p, what, kParamKeys); !s) return s;
  basil::ReserveParam rp;
  // A width basild records: the store keeps counts as signed 64-bit.
  auto width = required_uint_arg(p, what, "width", kJsonI64Max, 1);
  if (!width) return width.status();
  rp.width = *width;
  for (auto [name, field] : {std::pair{"depth", &basil::ReserveParam::depth}, std::pair{"nppn", &basil::ReserveParam::nppn},
                             std::pair{"nppcu", &basil::ReserveParam::nppcu}}) {
    auto v = uint_arg(p, what, name, kJsonU32Max);
    if (!v) return v.status();
    if (*v) rp.*field = static_cast<std::uint32_t>(**v);
  }
  auto memory = uint_arg(p, what, "memory_mb", kJsonU64Max);
  if (!memory) return memory.status();
  if (*memory) rp.memory.push_back({basil::MemoryType::kOS, **memory});
  if (p.contains("nodes")) {
    if (!p["nodes"].is_string()) return bad(what + ": \"nodes\" must be a NID list string (\"24-27,30\")");
    auto list = basil::NidList::parse(p["nodes"].get<std::string>());
    if (!list) return bad(what + ": \"nodes\": " + list.status().message());
    if (list->empty()) return bad(what + ": \"nodes\" names no node (leave it out for any nodes)");
    rp.nodes.push_back(*list);
  }
  if (p.contains("mode")) {
    auto mode = p["mode"].is_string() ? basil::parse_known_enum<basil::ReservationMode>(p["mode"].get<std::string>())
                                      : std::nullopt;
    if (!mode) return bad(what + ": \"mode\" must be \"EXCLUSIVE\" or \"SHARED\"");
    rp.reservation_mode = *mode;
  }
  return rp;
}

}  // namespace

basil::Result<basil::ReserveRequest> reserve_from_json(const json& j) {
  basil::ReserveRequest q;
  if (auto s = reserve_header_from_json(j, q); !s) return s;
  if (auto s = only_known_keys(j, "reserve", kReserveKeys); !s)
    return bad(s.message() + "; or the job form: \"job\" and \"policy\" instead of \"params\"");
  if (!j.contains("params") || !j["params"].is_array() || j["params"].empty())
    return bad("reserve: \"params\" (a non-empty array) or \"job\" (an object) is required");
  std::uint64_t width = 0;
  for (std::size_t i = 0; i < j["params"].size(); ++i) {
    auto rp = param_from_json(j["params"][i], "reserve: params[" + std::to_string(i) + "]");
    if (!rp) return rp.status();
    if (rp->width > kJsonI64Max - width)
      return bad("reserve: the params' widths add up to more than " + std::to_string(kJsonI64Max));
    width += rp->width;
    q.params.push_back(std::move(*rp));
  }
  return q;
}

json reserve_to_json(const basil::ReserveRequest& q) {
  json params = json::array();
  for (const auto& p : q.params) {
    json e = {{"width", p.width}};
    if (p.depth) e["depth"] = *p.depth;
    if (p.nppn) e["nppn"] = *p.nppn;
    if (p.nppcu) e["nppcu"] = *p.nppcu;
    if (!p.memory.empty()) e["memory_mb"] = p.memory.front().size_mb;
    if (!p.nodes.empty()) e["nodes"] = p.nodes.front().format();
    if (p.reservation_mode) e["mode"] = basil::to_string(*p.reservation_mode);
    params.push_back(std::move(e));
  }
  json j = {{"batch_id", q.batch_id.value_or("")}, {"user", q.user_name}, {"params", std::move(params)}};
  if (q.account_name) j["account"] = *q.account_name;
  return j;
}

basil::Result<basil::ConfirmRequest> confirm_from_json(const json& j) {
  if (auto s = only_known_keys(j, "confirm", {"reservation_id", "pagg_id", "batch_id"}); !s) return s;
  basil::ConfirmRequest q;
  auto res_id = required_uint_arg(j, "confirm", "reservation_id", kJsonU64Max);
  if (!res_id) return res_id.status();
  auto pagg = required_uint_arg(j, "confirm", "pagg_id", kJsonU64Max);
  if (!pagg) return pagg.status();
  q.reservation_id = *res_id;
  q.pagg_id = *pagg;
  return q;
}

basil::Result<basil::ReleaseRequest> release_from_json(const json& j) {
  if (auto s = only_known_keys(j, "release", {"reservation_id"}); !s) return s;
  auto res_id = required_uint_arg(j, "release", "reservation_id", kJsonU64Max);
  if (!res_id) return res_id.status();
  basil::ReleaseRequest q;
  q.reservation_id = *res_id;
  return q;
}

control::Response unknown_release_reply(std::uint64_t res_id) {
  return control::Response::json(
      {{"reservation_id", res_id},
       {"state", "unknown"},
       {"error", "release: reservation " + std::to_string(res_id) +
                     " is unknown: basild never recorded it and ALPS has no entry for it"},
       {"code", basil::code_name(basil::Code::kReservationUnknown)},
       {"transient", false}},
      ResultCode::kNotFound);
}

}  // namespace basild
