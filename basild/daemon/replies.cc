#include "basild/daemon/replies.h"

#include "basil_proto/codec.h"
#include "basild/core/job_json.h"

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

basil::Result<basil::ReserveRequest> reserve_from_json(const json& j) {
  auto bad = [](std::string m) { return basil::Status(basil::Code::kInvalidValue, std::move(m)); };
  basil::ReserveRequest q;
  if (auto s = reserve_header_from_json(j, q); !s) return s;
  if (!j.contains("params") || !j["params"].is_array() || j["params"].empty())
    return bad("reserve: \"params\" (a non-empty array) is required");
  for (const auto& p : j["params"]) {
    if (!p.is_object()) return bad("reserve: each param must be an object");
    basil::ReserveParam rp;
    auto uint_field = [&](const char* name, std::uint64_t max) -> std::optional<std::uint64_t> {
      if (!p.contains(name)) return std::nullopt;
      if (!p[name].is_number_unsigned() || p[name].get<std::uint64_t>() > max) return std::nullopt;
      return p[name].get<std::uint64_t>();
    };
    for (const char* name : {"width", "depth", "nppn", "nppcu", "memory_mb"})
      if (p.contains(name) && !uint_field(name, UINT64_MAX))
        return bad(std::string("reserve: \"") + name + "\" must be a non-negative integer");
    auto width = uint_field("width", UINT64_MAX);
    if (!width || *width == 0) return bad("reserve: \"width\" (a positive integer) is required");
    rp.width = *width;
    if (auto v = uint_field("depth", UINT32_MAX)) rp.depth = static_cast<std::uint32_t>(*v);
    if (auto v = uint_field("nppn", UINT32_MAX)) rp.nppn = static_cast<std::uint32_t>(*v);
    if (auto v = uint_field("nppcu", UINT32_MAX)) rp.nppcu = static_cast<std::uint32_t>(*v);
    if (auto v = uint_field("memory_mb", UINT64_MAX)) rp.memory.push_back({basil::MemoryType::kOS, *v});
    if (p.contains("nodes")) {
      if (!p["nodes"].is_string()) return bad("reserve: \"nodes\" must be a NID list string");
      auto list = basil::NidList::parse(p["nodes"].get<std::string>());
      if (!list) return list.status();
      if (!list->empty()) rp.nodes.push_back(*list);
    }
    if (p.contains("mode")) {
      auto mode = p["mode"].is_string() ? basil::parse_known_enum<basil::ReservationMode>(p["mode"].get<std::string>())
                                        : std::nullopt;
      if (!mode) return bad("reserve: \"mode\" must be EXCLUSIVE or SHARED");
      rp.reservation_mode = *mode;
    }
    q.params.push_back(std::move(rp));
  }
  return q;
}

std::optional<std::uint64_t> json_uint(const json& j, const char* name) {
  if (!j.contains(name) || !j[name].is_number_unsigned()) return std::nullopt;
  return j[name].get<std::uint64_t>();
}

}  // namespace basild
