// The root element: the kind of document, its protocol (hence its dialect)
// and, for a request, its method and query type (hence its operation), read
// before any other element is judged.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "basil_proto/codec.h"
#include "basil_proto/dialect.h"
#include "basil_proto/model.h"
#include "basil_proto/status.h"
#include "basil_proto/src/decode_tables.h"
#include "basil_proto/src/decode_walk.h"

namespace basil::decode_detail {

bool Walk::set_protocol(std::string_view p) {
  std::string proto(p);
  DMask ext = 0;
  if (p == "1.0") {
    dialect = Dialect::k1_0;
  } else if (p == "1.1") {
    dialect = Dialect::k1_1;
  } else if (p == "1.2") {
    dialect = Dialect::k1_2;
  } else if (p == "1.3") {
    dialect = Dialect::k1_3;
  } else if (p == "1.4" || p == "1.5" || p == "1.6" || p == "1.7") {
    dialect = Dialect::k1_3;
    ext = kDExt;
    warn("protocol " + proto + " is decoded as dialect 1.3");
  } else if (kind == DocumentKind::kResponse) {
    // A FAILURE echoes whatever protocol its request named, or "" (ALPS);
    // checked against ResponseData@status.
    dialect = Dialect::k1_3;
    failure_only_protocol = true;
  } else {
    fail(Code::kUnsupportedProtocol, "unsupported BASIL protocol " + quote(p));
    return false;
  }
  dmask = static_cast<DMask>(ext | dialect_bit(dialect));
  if (kind == DocumentKind::kRequest) {
    req->protocol = std::move(proto);
  } else {
    resp->protocol = std::move(proto);
  }
  return true;
}

// Before anything about the request is judged: its protocol and method as
// written, so that even a request refused further on gets a FAILURE its
// client accepts.
void Walk::note_envelope(int nb_attributes, const xmlChar** attributes) {
  RequestEnvelope e;
  std::string value;
  for (int k = 0; k < nb_attributes; ++k) {
    const xmlChar** at = attributes + static_cast<std::ptrdiff_t>(k) * 5;
    if (at[1] != nullptr) continue;
    const std::string_view aname = sv(at[0]);
    if (aname != "protocol" && aname != "method") continue;
    unescape_amp(sv(at[3], at[4]), value);
    if (aname == "protocol") {
      e.protocol = value;
    } else if (auto m = parse_enum<Method>(value)) {
      e.method = *m;
    }
  }
  envelope = std::move(e);
}

// BasilResponse or BasilRequest, and the one the decoder expects.
bool Walk::root_kind(std::string_view name, bool namespaced) {
  if (!namespaced && name == "BasilResponse") {
    kind = DocumentKind::kResponse;
  } else if (!namespaced && name == "BasilRequest") {
    kind = DocumentKind::kRequest;
  } else {
    fail(Code::kStructure,
         "root element " + clip(name) + " is neither BasilRequest nor BasilResponse", clip(name));
    return false;
  }
  if ((expect == Decoder::Expect::kRequest && kind != DocumentKind::kRequest) ||
      (expect == Decoder::Expect::kResponse && kind != DocumentKind::kResponse)) {
    fail(Code::kStructure,
         std::string("expected a ") +
             (expect == Decoder::Expect::kRequest ? "BasilRequest" : "BasilResponse") + ", got " +
             std::string(name),
         name);
    return false;
  }
  return true;
}

void Walk::start_root(std::string_view name, bool namespaced, int nb_attributes,
                      const xmlChar** attributes) {
  root_seen = true;
  if (!namespaced && name == "BasilRequest") note_envelope(nb_attributes, attributes);
  if (!root_kind(name, namespaced)) return;
  out.kind = kind;
  const bool is_request = kind == DocumentKind::kRequest;
  stack.push(is_request ? Ctx::kReqRoot : Ctx::kRespRoot,
             is_request ? kElems[1].name : kElems[0].name);
  if (is_request) {
    req = &out.document.emplace<Request>();
  } else {
    resp = &out.document.emplace<Response>();
  }

  // protocol (and for a request method and type) decide the dialect and
  // the operation, which the attribute checks need.
  std::optional<std::string_view> protocol, method, type;
  for (int k = 0; k < nb_attributes; ++k) {
    const xmlChar** at = attributes + static_cast<std::ptrdiff_t>(k) * 5;
    if (at[1] != nullptr) continue;
    const std::string_view aname = sv(at[0]);
    const std::string_view value = sv(at[3], at[4]);
    if (aname == "protocol") protocol = value;
    if (aname == "method") method = value;
    if (aname == "type") type = value;
  }
  if (!protocol) {
    fail(Code::kStructure,
         "element " + std::string(name) + " lacks the required attribute protocol");
    return;
  }
  if (!set_protocol(*protocol)) return;
  if (!is_request) {
    collect_attrs(nb_attributes, attributes);
    return;
  }
  start_request_root(nb_attributes, attributes, method, type);
}

// A BasilRequest's method and query type: its operation, whose dialects the
// tables give (kOps), and its body.
bool Walk::start_request_root(int nb_attributes, const xmlChar** attributes,
                              std::optional<std::string_view> method,
                              std::optional<std::string_view> type) {
  if (!method) {
    fail(Code::kStructure, "element BasilRequest lacks the required attribute method");
    return false;
  }
  const std::optional<Method> m = parse_enum<Method>(*method);
  if (!m || *m == Method::kUndefined) {
    fail(Code::kInvalidValue, "BasilRequest@method: unknown method " + quote(*method));
    return false;
  }
  std::optional<QueryType> t;
  if (*m == Method::kQuery) {
    if (!type) {
      fail(Code::kStructure, "element BasilRequest lacks the required attribute type");
      return false;
    }
    t = parse_enum<QueryType>(*type);
    if (!t) {
      fail(Code::kInvalidValue, "QUERY type " + clip(*type) + " is not supported");
      return false;
    }
  }
  ops = op_of(*m, t);
  if (const OpSpec* o = op_spec(ops); o != nullptr && !dialect_ok(o->dialects, o->name)) return false;

  // The body first: messages about the root's attributes name the method.
  emplace_request_body(*m, t);
  if (!collect_attrs(nb_attributes, attributes)) return false;
  request_root_attrs(*m);
  return true;
}

void Walk::emplace_request_body(Method m, std::optional<QueryType> t) {
  switch (m) {
    case Method::kQuery:
      switch (*t) {
        case QueryType::kEngine: req->body.emplace<EngineQuery>(); break;
        case QueryType::kInventory: iq = &req->body.emplace<InventoryQuery>(); break;
        case QueryType::kSummary: req->body.emplace<SummaryQuery>(); break;
        case QueryType::kStatus: sq = &req->body.emplace<StatusQuery>(); break;
      }
      break;
    case Method::kReserve: reserve = &req->body.emplace<ReserveRequest>(); break;
    case Method::kSwitch: sw = &req->body.emplace<SwitchRequest>(); break;
    case Method::kConfirm: req->body.emplace<ConfirmRequest>(); break;
    case Method::kRelease: req->body.emplace<ReleaseRequest>(); break;
    case Method::kUndefined: break;
  }
}

// The attributes of a CONFIRM or RELEASE root: the whole request.
void Walk::request_root_attrs(Method m) {
  if (m == Method::kConfirm) {
    ConfirmRequest c;
    std::optional<std::uint64_t> pagg;
    if (!root_ids(c.reservation_id, pagg)) return;
    if (!pagg) {
      fail(Code::kStructure, "a CONFIRM request needs pagg_id or admin_cookie");
      return;
    }
    c.pagg_id = *pagg;
    opt_str(attrs[ix(kReqRootAttrs, "job_name")], c.job_name);
    req->body = std::move(c);
  } else if (m == Method::kRelease) {
    ReleaseRequest r;
    if (!root_ids(r.reservation_id, r.pagg_id)) return;
    req->body = std::move(r);
  }
}

// reservation_id, and pagg_id or its 1.0/1.1 name admin_cookie (the two
// must agree where both are given).
bool Walk::root_ids(std::uint64_t& reservation_id, std::optional<std::uint64_t>& pagg) {
  const DecodeAttr* a = attrs;
  std::optional<std::uint64_t> cookie;
  if (!number(a[ix(kReqRootAttrs, "reservation_id")], reservation_id) ||
      !opt_number(a[ix(kReqRootAttrs, "pagg_id")], pagg) ||
      !opt_number(a[ix(kReqRootAttrs, "admin_cookie")], cookie) || !same_cookie(pagg, cookie)) {
    return false;
  }
  if (!pagg) pagg = cookie;
  return true;
}

bool Walk::same_cookie(const std::optional<std::uint64_t>& pagg,
                 const std::optional<std::uint64_t>& cookie) {
  if (pagg && cookie && *pagg != *cookie) {
    fail(Code::kInvalidValue, "pagg_id and admin_cookie differ");
    return false;
  }
  return true;
}

}  // namespace basil::decode_detail
