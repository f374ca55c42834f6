// The SQLite store: rows decoded into records and records written as rows.
#include "basild/io/store_internal.h"

namespace basild {

using namespace store_detail;

// ---------------------------------------------------------------- row codecs

namespace store_detail {

basil::Result<std::uint32_t> u32_of(std::int64_t v, const char* what) {
  if (v < 0 || v > static_cast<std::int64_t>(UINT32_MAX)) {
    return Status(Code::kInvalidValue, std::string(what) + " out of range: " + std::to_string(v));
  }
  return static_cast<std::uint32_t>(v);
}

basil::Result<ReservationRecord> decode_reservation(const Stmt& s) {
  ReservationRecord r;
  r.res_id = from_db(s.i64(0));
  r.batch_id = s.text(1);
  r.user = s.text(2);
  r.account = s.text(3);
  auto nodes = basil::NidList::parse(s.text(4));
  if (!nodes) return Status(Code::kInvalidValue, "bad NID list: " + nodes.status().message());
  r.nodes = std::move(*nodes);
  if (s.i64(5) < 0) return Status(Code::kInvalidValue, "negative width");
  r.width = from_db(s.i64(5));
  auto depth = u32_of(s.i64(6), "depth");
  auto nppn = u32_of(s.i64(7), "nppn");
  auto nppcu = u32_of(s.i64(8), "nppcu");
  if (!depth) return depth.status();
  if (!nppn) return nppn.status();
  if (!nppcu) return nppcu.status();
  r.depth = *depth;
  r.nppn = *nppn;
  r.nppcu = *nppcu;
  auto state = res_state_from_name(s.text(9));
  if (!state) return Status(Code::kInvalidValue, "unknown state \"" + s.text(9) + "\"");
  r.state = *state;
  auto origin = res_origin_from_name(s.text(10));
  if (!origin) return Status(Code::kInvalidValue, "unknown origin \"" + s.text(10) + "\"");
  r.origin = *origin;
  if (auto v = s.opt_i64(11)) r.pagg_id = from_db(*v);
  r.intent_id = s.opt_i64(12);
  r.created = from_ms(s.i64(13));
  if (auto v = s.opt_i64(14)) r.confirmed = from_ms(*v);
  if (auto v = s.opt_i64(15)) r.released = from_ms(*v);
  if (auto v = s.opt_i64(16)) r.last_seen = from_ms(*v);
  return r;
}

basil::Result<Intent> decode_intent(const Stmt& s) {
  Intent i;
  i.id = s.i64(0);
  i.batch_id = s.text(1);
  i.user = s.text(2);
  i.params = s.text(3);
  auto state = intent_state_from_name(s.text(4));
  if (!state) return Status(Code::kInvalidValue, "unknown intent state \"" + s.text(4) + "\"");
  i.state = *state;
  i.created = from_ms(s.i64(5));
  if (auto v = s.opt_i64(6)) i.settled = from_ms(*v);
  if (auto v = s.opt_i64(7)) i.res_id = from_db(*v);
  i.detail = s.text(8);
  i.forwarded = s.i64(9) != 0;
  return i;
}

basil::Result<AuditEntry> decode_audit(const Stmt& s) {
  AuditEntry a;
  a.id = s.i64(0);
  a.time = from_ms(s.i64(1));
  a.kind = s.text(2);
  if (auto v = s.opt_i64(3)) a.res_id = from_db(*v);
  a.batch_id = s.text(4);
  a.user = s.text(5);
  auto nodes = basil::NidList::parse(s.text(6));
  if (!nodes) return Status(Code::kInvalidValue, "bad NID list: " + nodes.status().message());
  a.nodes = std::move(*nodes);
  a.detail = s.text(7);
  return a;
}

JobRecord decode_job(const Stmt& s) {
  JobRecord j;
  j.source = s.text(0);
  j.job_id = s.text(1);
  j.state = s.text(2);
  j.first_seen = from_ms(s.i64(3));
  j.last_seen = from_ms(s.i64(4));
  if (auto v = s.opt_i64(5)) j.ended = from_ms(*v);
  return j;
}

std::string detail_or_empty_object(const std::string& detail) { return detail.empty() ? "{}" : detail; }

}  // namespace store_detail

// ---------------------------------------------------------------- rows written and read in a transaction

Status Store::Impl::insert_audit(std::string_view kind, const std::optional<std::uint64_t>& res_id,
                                 const std::string& batch_id, const std::string& user,
                                 const basil::NidList& nodes, const nlohmann::json& detail,
                                 const std::string& extra_json) {
  Stmt s(db, sql::kInsertAudit, "audit");
  s.bind(1, db.now_ms()).bind(2, kind);
  if (res_id) {
    s.bind(3, to_db(*res_id));
  } else {
    s.bind_null(3);
  }
  const std::string text = extra_json.empty() ? detail.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                                              : extra_json;
  return s.bind(4, batch_id).bind(5, user).bind(6, nodes.format()).bind(7, text).run();
}

basil::Result<std::optional<ReservationRecord>> Store::Impl::load(std::uint64_t res_id, std::string_view what) {
  Stmt s(db, sql::kSelectReservation, what);
  s.bind(1, to_db(res_id));
  auto row = s.step();
  if (!row) return row.status();
  if (!*row) return std::optional<ReservationRecord>();
  auto r = decode_reservation(s);
  if (!r) {
    return Status(Code::kMalformed, "state database " + db.path() + ": reservation " + std::to_string(res_id) +
                                        " does not decode: " + r.status().message());
  }
  return std::optional<ReservationRecord>(std::move(*r));
}

basil::Result<std::optional<Intent>> Store::Impl::load_intent(std::int64_t id, std::string_view what) {
  Stmt s(db, sql::kSelectIntent, what);
  s.bind(1, id);
  auto row = s.step();
  if (!row) return row.status();
  if (!*row) return std::optional<Intent>();
  auto i = decode_intent(s);
  if (!i) {
    return Status(Code::kMalformed, "state database " + db.path() + ": intent " + std::to_string(id) +
                                        " does not decode: " + i.status().message());
  }
  return std::optional<Intent>(std::move(*i));
}

Status Store::Impl::insert_reservation(const ReservationRecord& r, std::string_view what) {
  Stmt s(db, sql::kInsertReservation, what);
  bind_reservation_columns(s, r)
      .bind(10, res_state_name(r.state))
      .bind(11, res_origin_name(r.origin));
  if (r.pagg_id) {
    s.bind(12, to_db(*r.pagg_id));
  } else {
    s.bind_null(12);
  }
  s.bind(13, r.intent_id).bind(14, to_ms(r.created));
  auto opt_ms = [](const std::optional<WallTime>& t) {
    return t ? std::optional<std::int64_t>(to_ms(*t)) : std::nullopt;
  };
  s.bind(15, opt_ms(r.confirmed)).bind(16, opt_ms(r.released)).bind(17, opt_ms(r.last_seen));
  return s.run();
}

}  // namespace basild
