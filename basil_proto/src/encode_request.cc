// The request encoder: a Request -> a BasilRequest document in its dialect,
// laid out as apbasil writes (declaration line, one element per line, one
// space of indentation per depth, attributes in a fixed order, everything
// escaped). Dialect rules (kNotInDialect) are checked before anything of the
// element they concern is written; a refusal discards what was written.
// Nothing throws out of encode_request().
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "basil_proto/codec.h"
#include "basil_proto/dialect.h"
#include "basil_proto/model.h"
#include "basil_proto/nidlist.h"
#include "basil_proto/status.h"
#include "basil_proto/src/encode_common.h"
#include "basil_proto/src/xml_writer.h"

namespace basil {
namespace {

using namespace encode_detail;  // NOLINT: the encoder's private helpers
using decode_detail::kOpInventory;

const char* query_type_name(QueryType t) {
  switch (t) {
    case QueryType::kEngine: return "ENGINE";
    case QueryType::kInventory: return "INVENTORY";
    case QueryType::kSummary: return "SUMMARY";
    case QueryType::kStatus: return "STATUS";
  }
  return "";
}

class RequestEncoder {
 public:
  RequestEncoder(XmlWriter& w, const Request& r) : w_(w), r_(r), d_(r.dialect) {}

  Status run() {
    if (auto gap = part_not_in_dialect(r_, d_)) return not_in_dialect(d_, gap->part, gap->since);
    return std::visit([this](const auto& body) { return write(body); }, r_.body);
  }

 private:
  // <BasilRequest protocol method [type]: the attributes every request has.
  Status open(const char* method, const char* type) {
    w_.start("BasilRequest");
    if (r_.protocol.empty()) {
      w_.attr("protocol", protocol_string(d_));
    } else {
      BASIL_RETURN_IF_ERROR(w_.attr_text("BasilRequest", "protocol", r_.protocol));
    }
    w_.attr("method", method);
    if (type != nullptr) w_.attr("type", type);
    return {};
  }

  Status query(QueryType t) { return open("QUERY", query_type_name(t)); }

  // True when the request's dialect has what `mask` (from the tables) marks.
  bool says(DMask mask) const { return encode_detail::says(d_, mask); }

  // pagg_id is admin_cookie in 1.0 and 1.1 (orig).
  const char* pagg_name() const {
    return says(attr_dialects(Ctx::kReqRoot, "pagg_id")) ? "pagg_id" : "admin_cookie";
  }

  Status write(const EngineQuery&) {
    BASIL_RETURN_IF_ERROR(query(QueryType::kEngine));
    w_.end();
    return {};
  }

  Status write(const InventoryQuery& q) {
    using Form = InventoryQuery::Form;
    if (q.form != Form::kFull && !says(elem_dialects(Ctx::kReqRoot, "Inventory", kOpInventory)))
      return not_in_dialect(d_,
                            q.form == Form::kNodesSince ? "INVENTORY request with NodeArray changecount"
                                                        : "INVENTORY request for reservations only",
                            "the request forms are used from 1.2");
    if (q.form != Form::kNodesSince && q.changecount != 0)
      return refused("InventoryQuery changecount is only written in the nodes-since form");
    BASIL_RETURN_IF_ERROR(query(QueryType::kInventory));
    if (q.form != Form::kFull) {
      w_.start("Inventory");
      if (q.form == Form::kNodesSince) {
        w_.start("NodeArray");
        w_.attr("changecount", q.changecount);
        w_.end();
      }
      w_.start("ReservationArray");
      w_.end();
      w_.end();
    }
    w_.end();
    return {};
  }

  Status write(const SummaryQuery&) {
    BASIL_RETURN_IF_ERROR(query(QueryType::kSummary));
    w_.end();
    return {};
  }

  Status write(const StatusQuery& q) {
    if (q.reservation_ids.empty() == q.application_ids.empty())
      return refused("QUERY STATUS names reservations or applications, one of the two");
    BASIL_RETURN_IF_ERROR(query(QueryType::kStatus));
    if (!q.reservation_ids.empty()) {
      w_.start("ReservationArray");
      for (std::uint64_t id : q.reservation_ids) {
        w_.start("Reservation");
        w_.attr("reservation_id", id);
        w_.end();
      }
      w_.end();
    }
    if (!q.application_ids.empty()) {
      w_.start("ApplicationArray");
      for (std::uint64_t id : q.application_ids) {
        w_.start("Application");
        w_.attr("application_id", id);
        w_.end();
      }
      w_.end();
    }
    w_.end();
    return {};
  }

  Status write(const ReserveRequest& q) {
    if (q.params.empty()) return refused("RESERVE needs at least one ReserveParam");
    if (q.batch_id && !says(attr_dialects(Ctx::kRpArray, "batch_id")))
      return not_in_dialect(d_, "ReserveParamArray@batch_id", "1.1 onwards");
    BASIL_RETURN_IF_ERROR(open("RESERVE", nullptr));
    w_.start("ReserveParamArray");
    BASIL_RETURN_IF_ERROR(w_.attr_text("ReserveParamArray", "user_name", q.user_name));
    if (q.batch_id)
      BASIL_RETURN_IF_ERROR(w_.attr_text("ReserveParamArray", "batch_id", *q.batch_id));
    if (q.account_name)
      BASIL_RETURN_IF_ERROR(w_.attr_text("ReserveParamArray", "account_name", *q.account_name));
    for (const ReserveParam& p : q.params) {
      BASIL_RETURN_IF_ERROR(check_param(p));
      BASIL_RETURN_IF_ERROR(write_param(p));
    }
    w_.end();
    w_.end();
    return {};
  }

  // What a ReserveParam may hold in this dialect, before any of it is written
  // (besides what part_not_in_dialect() refuses).
  Status check_param(const ReserveParam& p) const {
    if (p.reservation_mode && !says(attr_dialects(Ctx::kRp, "reservation_mode")))
      return not_in_dialect(d_, "ReserveParam@reservation_mode", "1.1+ onwards");
    if (p.gpc_mode && !says(attr_dialects(Ctx::kRp, "gpc_mode")))
      return not_in_dialect(d_, "ReserveParam@gpc_mode", "1.1+ onwards");
    if (p.oscpn && !says(attr_dialects(Ctx::kRp, "oscpn")))
      return not_in_dialect(d_, "ReserveParam@oscpn", "1.1+ onwards");
    if (p.p_state && !says(attr_dialects(Ctx::kRp, "p-state")))
      return not_in_dialect(d_, "ReserveParam@p-state", "1.3 onwards");
    if (p.p_governor && !says(attr_dialects(Ctx::kRp, "p-governor")))
      return not_in_dialect(d_, "ReserveParam@p-governor", "1.3 onwards");
    if (p.nodes.size() > 1)
      return refused("this project writes at most one NodeParam per ReserveParam (got " +
                     std::to_string(p.nodes.size()) + "; nodes of different layouts go in separate ReserveParams)");
    if (p.nodes.size() == 1 && p.nodes.front().empty())
      return refused("NodeParam with an empty NID list");
    return {};
  }

  Status write_param(const ReserveParam& p) {
    w_.start("ReserveParam");
    BASIL_RETURN_IF_ERROR(w_.attr_text("ReserveParam", "architecture", p.architecture));
    w_.attr("width", p.width);
    if (p.depth) w_.attr("depth", std::uint64_t{*p.depth});
    if (p.nppn) w_.attr("nppn", std::uint64_t{*p.nppn});
    if (p.npps) w_.attr("npps", std::uint64_t{*p.npps});
    if (p.nspn) w_.attr("nspn", std::uint64_t{*p.nspn});
    // nppcu 0 (ALPS's default) is not written before 1.3, where it does not exist.
    if (p.nppcu && says(attr_dialects(Ctx::kRp, "nppcu"))) w_.attr("nppcu", std::uint64_t{*p.nppcu});
    if (p.segments) BASIL_RETURN_IF_ERROR(w_.attr_text("ReserveParam", "segments", *p.segments));
    if (p.reservation_mode) w_.attr("reservation_mode", to_string(*p.reservation_mode));
    if (p.gpc_mode) w_.attr("gpc_mode", to_string(*p.gpc_mode));
    if (p.oscpn) w_.attr("oscpn", std::uint64_t{*p.oscpn});
    if (p.p_state) w_.attr("p-state", *p.p_state);
    if (p.p_governor) w_.attr("p-governor", to_string(*p.p_governor));

    if (!p.memory.empty()) {
      w_.start("MemoryParamArray");
      for (const MemoryParam& m : p.memory) {
        w_.start("MemoryParam");
        w_.attr("type", to_string(m.type));
        w_.attr("size_mb", m.size_mb);
        w_.end();
      }
      w_.end();
    }
    if (!p.labels.empty()) {
      w_.start("LabelParamArray");
      for (const LabelParam& l : p.labels) {
        w_.start("LabelParam");
        BASIL_RETURN_IF_ERROR(w_.attr_text("LabelParam", "name", l.name));
        w_.attr("type", to_string(l.type));
        w_.attr("disposition", to_string(l.disposition));
        w_.end();
      }
      w_.end();
    }
    if (!p.nodes.empty()) {
      w_.start("NodeParamArray");
      w_.start("NodeParam");
      w_.write_text(p.nodes.front().format());
      w_.end();
      w_.end();
    }
    if (!p.accelerators.empty()) {
      w_.start("AccelParamArray");
      for (const AccelParam& a : p.accelerators) {
        w_.start("AccelParam");
        BASIL_RETURN_IF_ERROR(w_.attr_text("AccelParam", "type", a.type));
        if (a.family) BASIL_RETURN_IF_ERROR(w_.attr_text("AccelParam", "family", *a.family));
        if (a.memory_mb) w_.attr("memory_mb", *a.memory_mb);
        w_.end();
      }
      w_.end();
    }
    w_.end();
    return {};
  }

  Status write(const ConfirmRequest& q) {
    if (q.job_name && !says(attr_dialects(Ctx::kReqRoot, "job_name")))
      return not_in_dialect(d_, "CONFIRM job_name", "1.0 only");
    BASIL_RETURN_IF_ERROR(open("CONFIRM", nullptr));
    w_.attr("reservation_id", q.reservation_id);
    w_.attr(pagg_name(), q.pagg_id);
    if (q.job_name) BASIL_RETURN_IF_ERROR(w_.attr_text("BasilRequest", "job_name", *q.job_name));
    w_.end();
    return {};
  }

  Status write(const ReleaseRequest& q) {
    BASIL_RETURN_IF_ERROR(open("RELEASE", nullptr));
    w_.attr("reservation_id", q.reservation_id);
    if (q.pagg_id) w_.attr(pagg_name(), *q.pagg_id);
    w_.end();
    return {};
  }

  Status write(const SwitchRequest& q) {
    if (q.reservations.empty() == q.applications.empty())
      return refused("SWITCH names reservations or applications, one of the two");
    BASIL_RETURN_IF_ERROR(open("SWITCH", nullptr));
    if (!q.reservations.empty()) {
      w_.start("ReservationArray");
      for (const SwitchItem& i : q.reservations) {
        w_.start("Reservation");
        w_.attr("reservation_id", i.id);
        w_.attr("action", to_string(i.action));
        w_.end();
      }
      w_.end();
    }
    if (!q.applications.empty()) {
      w_.start("ApplicationArray");
      for (const SwitchItem& i : q.applications) {
        w_.start("Application");
        w_.attr("application_id", i.id);
        w_.attr("action", to_string(i.action));
        w_.end();
      }
      w_.end();
    }
    w_.end();
    return {};
  }

  XmlWriter& w_;
  const Request& r_;
  Dialect d_;
};

}  // namespace

std::optional<PartNotInDialect> part_not_in_dialect(const Request& request, Dialect d) {
  using decode_detail::op_of;
  using decode_detail::op_spec;
  if (const auto* op = op_spec(op_of(request.method(), request.query_type())); op != nullptr && !says(d, op->dialects))
    return PartNotInDialect{std::string(op->name), onwards(op->dialects)};
  const auto* reserve = std::get_if<ReserveRequest>(&request.body);
  if (reserve == nullptr) return std::nullopt;
  constexpr DMask kNppcu = attr_dialects(Ctx::kRp, "nppcu");
  constexpr DMask kAccel = elem_dialects(Ctx::kRp, "AccelParamArray");
  for (const ReserveParam& p : reserve->params) {
    if (p.nppcu.value_or(0) > 0 && !says(d, kNppcu))
      return PartNotInDialect{"ReserveParam@nppcu=" + std::to_string(*p.nppcu), onwards(kNppcu)};
    if (!p.accelerators.empty() && !says(d, kAccel)) return PartNotInDialect{"AccelParam", onwards(kAccel)};
  }
  return std::nullopt;
}

Result<std::string> encode_request(const Request& request) {
  return write_document(512, [&](XmlWriter& w) { return RequestEncoder(w, request).run(); });
}

}  // namespace basil
