// The response encoder (encode_response.h): the BasilResponse envelope and
// every answer but INVENTORY's (encode_inventory.cc). Dialect rules
// (kNotInDialect) are checked before anything of the element they concern is
// written; a refusal discards what was written. Nothing throws out of
// encode_response().
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <variant>
#include <vector>

#include "basil_proto/codec.h"
#include "basil_proto/encode_stream.h"
#include "basil_proto/dialect.h"
#include "basil_proto/model.h"
#include "basil_proto/nidlist.h"
#include "basil_proto/status.h"
#include "basil_proto/src/encode_common.h"
#include "basil_proto/src/encode_response.h"
#include "basil_proto/src/xml_writer.h"

namespace basil {
namespace encode_detail {
namespace {

using decode_detail::kOpStatus;
using decode_detail::kOpSwitch;

Method method_of(const ResponseBody& body) {
  struct V {
    Method operator()(const std::monostate&) const { return Method::kUndefined; }
    Method operator()(const Reserved&) const { return Method::kReserve; }
    Method operator()(const Confirmed&) const { return Method::kConfirm; }
    Method operator()(const Released&) const { return Method::kRelease; }
    Method operator()(const Switched&) const { return Method::kSwitch; }
    Method operator()(const EngineInfo&) const { return Method::kQuery; }
    Method operator()(const Inventory&) const { return Method::kQuery; }
    Method operator()(const Summary&) const { return Method::kQuery; }
    Method operator()(const StatusInfo&) const { return Method::kQuery; }
  };
  return std::visit(V{}, body);
}

const char* body_name(const ResponseBody& body) {
  static constexpr const char* kNames[] = {"nothing", "Engine",    "Inventory", "Summary", "STATUS answer",
                                           "Reserved", "Confirmed", "Released", "SWITCH answer"};
  static_assert(std::variant_size_v<ResponseBody> == std::size(kNames));
  return kNames[body.index()];
}
}  // namespace

Status ResponseEncoder::run() {
  // An UNKNOWN status (decoded from a value outside the list) is no SUCCESS.
  const bool failure = r_.status != ResponseStatus::kSuccess;
  if (r_.type && !says(attr_dialects(Ctx::kRespData, "type")))
    return not_in_dialect(d_, "ResponseData@type", "a 1.4/1.7 attribute: decoded, never written");
  if (!failure && (r_.error_class || r_.error_source))
    return refused("error_class/error_source are only written on a FAILURE");
  if (!failure && r_.protocol.empty())
    return refused("BasilResponse@protocol may only be empty on a FAILURE");
  if (r_.status == ResponseStatus::kFailure && r_.body.index() != 0)
    return refused(std::string("a FAILURE carries no ") + body_name(r_.body));
  if (r_.body.index() != 0 && method_of(r_.body) != r_.method)
    return refused(std::string(body_name(r_.body)) + " does not answer method " +
                   std::string(to_string(r_.method)));

  w_.start("BasilResponse");
  BASIL_RETURN_IF_ERROR(w_.attr_text("BasilResponse", "protocol", r_.protocol));
  w_.start("ResponseData");
  w_.attr("status", to_string(r_.status));
  w_.attr("method", to_string(r_.method));
  if (r_.error_class) w_.attr("error_class", to_string(*r_.error_class));
  if (r_.error_source) w_.attr("error_source", to_string(*r_.error_source));
  for (const Message& m : r_.messages) {
    w_.start("Message");
    w_.attr("severity", to_string(m.severity));
    BASIL_RETURN_IF_ERROR(w_.text("Message", m.text));
    w_.end();
  }
  BASIL_RETURN_IF_ERROR(std::visit([this](const auto& body) { return write(body); }, r_.body));
  w_.end();
  w_.end();
  return {};
}

Status ResponseEncoder::write(const EngineInfo& e) {
  w_.start("Engine");
  BASIL_RETURN_IF_ERROR(w_.attr_text("Engine", "name", e.name));
  BASIL_RETURN_IF_ERROR(w_.attr_text("Engine", "version", e.version));
  if (!e.basil_support.empty()) {
    std::string list;
    for (const std::string& v : e.basil_support) {
      if (v.empty() || v.find(',') != std::string::npos)
        return refused("Engine@basil_support item '" + v + "' is empty or holds a comma");
      if (!list.empty()) list += ',';
      list += v;
    }
    BASIL_RETURN_IF_ERROR(w_.attr_text("Engine", "basil_support", list));
  }
  w_.end();
  return {};
}

// ------------------------------------------------------------ summary

Status ResponseEncoder::write(const Summary& s) {
  if (!says(elem_dialects(Ctx::kRespData, "Summary")))
    return not_in_dialect(d_, "Summary", "1.3 onwards");
  w_.start("Summary");
  if (s.mpp_host) BASIL_RETURN_IF_ERROR(w_.attr_text("Summary", "mpp_host", *s.mpp_host));
  if (s.timestamp) w_.attr("timestamp", *s.timestamp);
  w_.attr("changecount", s.changecount);
  w_.attr("schedchangecount", s.schedchangecount);

  w_.start("NodeSummary");
  for (const NodeSummaryEntry& e : s.nodes) {
    if (e.up && e.state != NodeState::kUp)
      return refused("NodeSummary Up entry with state " + std::string(to_string(e.state)));
    if (!e.up && e.state == NodeState::kUp)
      return refused("NodeSummary Down entry with state UP");
    w_.start(e.up ? "Up" : "Down");
    w_.attr("role", to_string(e.role));
    w_.attr("architecture", to_string(e.architecture));
    w_.attr("count", e.count);
    if (!e.up) w_.attr("state", to_string(e.state));
    w_.write_text(e.nids.format());
    w_.end();
  }
  w_.end();

  if (s.has_accel_summary) {
    w_.start("AccelSummary");
    for (const AccelSummaryTotal& t : s.accel_totals) {
      w_.start("Accelerator");
      BASIL_RETURN_IF_ERROR(w_.attr_text("Accelerator", "type", t.type));
      BASIL_RETURN_IF_ERROR(w_.attr_text("Accelerator", "family", t.family));
      w_.attr("count", t.count);
      w_.end();
    }
    for (const AccelSummaryEntry& e : s.accels) {
      if (e.up && e.state != AccelState::kUp)
        return refused("AccelSummary Up entry with state " + std::string(to_string(e.state)));
      if (!e.up && e.state == AccelState::kUp)
        return refused("AccelSummary Down entry with state UP");
      const char* element = e.up ? "Up" : "Down";
      w_.start(element);
      BASIL_RETURN_IF_ERROR(w_.attr_text(element, "type", e.type));
      BASIL_RETURN_IF_ERROR(w_.attr_text(element, "family", e.family));
      w_.attr("count", e.count);
      if (!e.up) w_.attr("state", to_string(e.state));
      w_.write_text(e.nids.format());
      w_.end();
    }
    w_.end();
  } else if (!s.accel_totals.empty() || !s.accels.empty()) {
    return refused("Summary has accelerator entries but has_accel_summary is false");
  }
  w_.end();
  return {};
}

// ------------------------------------------------------------ status, switch

// <ReservationArray>/<ApplicationArray> of (id, status) items, directly
// under ResponseData; an array is written when it has items.
void ResponseEncoder::write_items(const std::vector<ItemResult>& reservations,
                 const std::vector<ItemResult>& applications) {
  if (!reservations.empty()) {
    w_.start("ReservationArray");
    for (const ItemResult& i : reservations) {
      w_.start("Reservation");
      w_.attr("reservation_id", i.id);
      w_.attr("status", to_string(i.status));
      w_.end();
    }
    w_.end();
  }
  if (!applications.empty()) {
    w_.start("ApplicationArray");
    for (const ItemResult& i : applications) {
      w_.start("Application");
      w_.attr("application_id", i.id);
      w_.attr("status", to_string(i.status));
      w_.end();
    }
    w_.end();
  }
}

Status ResponseEncoder::write(const StatusInfo& s) {
  if (!says(elem_dialects(Ctx::kRespData, "ReservationArray", kOpStatus)))
    return not_in_dialect(d_, "QUERY STATUS answer", "1.2 onwards");
  // A QUERY STATUS request names reservations or applications, not both, and
  // the answer lists the kind it named.
  if (s.reservations.empty() == s.applications.empty())
    return refused("a QUERY STATUS answer lists reservations or applications, one of the two");
  write_items(s.reservations, s.applications);
  return {};
}

Status ResponseEncoder::write(const Switched& s) {
  if (!says(elem_dialects(Ctx::kRespData, "ReservationArray", kOpSwitch)))
    return not_in_dialect(d_, "SWITCH answer", "1.2 onwards");
  if (s.reservations.empty() && s.applications.empty())
    return refused("a SWITCH answer lists no reservation and no application");
  write_items(s.reservations, s.applications);
  return {};
}

// ------------------------------------------------------------ methods

Status ResponseEncoder::write(const Reserved& r) {
  if (r.admin_cookie && !says(attr_dialects(Ctx::kReserved, "admin_cookie")))
    return not_in_dialect(d_, "Reserved@admin_cookie", "1.0 and 1.1 only");
  if (r.alloc_cookie && !says(attr_dialects(Ctx::kReserved, "alloc_cookie")))
    return not_in_dialect(d_, "Reserved@alloc_cookie", "1.0 and 1.1 only");
  if ((r.has_reserved_nodes || !r.reserved_nodes.empty()) &&
      !says(elem_dialects(Ctx::kReserved, "ReservedNodeArray")))
    return not_in_dialect(d_, "ReservedNodeArray", "1.1+ onwards");
  if (!r.has_reserved_nodes && !r.reserved_nodes.empty())
    return refused("Reserved lists nodes but has_reserved_nodes is false");
  w_.start("Reserved");
  w_.attr("reservation_id", r.reservation_id);
  if (r.admin_cookie) w_.attr("admin_cookie", *r.admin_cookie);
  if (r.alloc_cookie) w_.attr("alloc_cookie", *r.alloc_cookie);
  if (r.has_reserved_nodes) {
    w_.start("ReservedNodeArray");
    for (std::uint32_t nid : r.reserved_nodes) {
      w_.start("ReservedNode");
      w_.attr("node_id", std::uint64_t{nid});
      w_.end();
    }
    w_.end();
  }
  w_.end();
  return {};
}

Status ResponseEncoder::write(const Confirmed& c) {
  if (c.reservation_id && !says(attr_dialects(Ctx::kConfirmed, "reservation_id")))
    return not_in_dialect(d_, "Confirmed@reservation_id",
                          "1.1+ onwards; 1.0 and 1.1 answer a bare <Confirmed/>");
  if (c.pagg_id && !says(attr_dialects(Ctx::kConfirmed, "pagg_id")))
    return not_in_dialect(d_, "Confirmed@pagg_id",
                          "1.1+ onwards; 1.0 and 1.1 answer a bare <Confirmed/>");
  w_.start("Confirmed");
  if (c.reservation_id) w_.attr("reservation_id", *c.reservation_id);
  if (c.pagg_id) w_.attr("pagg_id", *c.pagg_id);
  w_.end();
  return {};
}

Status ResponseEncoder::write(const Released& r) {
  if (r.reservation_id && !says(attr_dialects(Ctx::kReleased, "reservation_id")))
    return not_in_dialect(d_, "Released@reservation_id",
                          "1.1+ onwards; 1.0 and 1.1 answer a bare <Released/>");
  if (r.claims && !says(attr_dialects(Ctx::kReleased, "claims")))
    return not_in_dialect(d_, "Released@claims", "1.2 onwards");
  w_.start("Released");
  if (r.reservation_id) w_.attr("reservation_id", *r.reservation_id);
  if (r.claims) w_.attr("claims", *r.claims);
  w_.end();
  return {};
}

}  // namespace encode_detail

namespace {

// A generous guess at the document size, so that a large inventory is not
// copied while the string grows (pages reserved but never written cost no
// memory): ~140 bytes per processor with its allocation, ~1.5 KB of
// structure per node and ~1 KB per reservation. A 1.3 XC30 node is 3-6 KB
// (5.2 KB with every processor allocated).
std::size_t size_hint(const Response& r) {
  const auto* inv = std::get_if<Inventory>(&r.body);
  if (inv == nullptr) return 1024;
  std::size_t bytes = 1024;
  for (const Node& n : inv->nodes) bytes += 1536 + std::size_t{n.processor_count()} * 140;
  bytes += inv->reservations.size() * 1024;
  return bytes;
}

}  // namespace

Result<std::string> encode_response(const Response& response) {
  using encode_detail::ResponseEncoder;
  using encode_detail::XmlWriter;
  std::size_t hint = 1024;
  try {
    hint = size_hint(response);
  } catch (...) {
  }
  return encode_detail::write_document(
      hint, [&](XmlWriter& w) { return ResponseEncoder(w, response).run(); });
}

StreamedDocument encode_response_streamed(const Response& response,
                                          const std::function<bool(std::string_view)>& write,
                                          std::size_t piece_bytes) {
  using encode_detail::ResponseEncoder;
  using encode_detail::XmlWriter;
  return encode_detail::write_streamed(write, piece_bytes, [&](XmlWriter& w) { return ResponseEncoder(w, response).run(); });
}

}  // namespace basil
