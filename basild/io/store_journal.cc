// The SQLite store: the job table, the audit log, node events, timings and
// the last good ENGINE answers.
#include "basild/io/store_internal.h"

#include <set>

namespace basild {

using namespace store_detail;

// ---- jobs

basil::Status Store::sync_jobs(const std::string& source, const std::vector<std::string>& live_ids) {
  constexpr std::string_view what = "sync_jobs";
  return impl_->db.transact(what, [&]() -> Status {
    std::set<std::string> before;
    {
      Stmt s(impl_->db, sql::kSelectLiveJobIds, what);
      s.bind(1, source);
      for (;;) {
        auto row = s.step();
        if (!row) return row.status();
        if (!*row) break;
        before.insert(s.text(0));
      }
    }
    const std::int64_t now = impl_->db.now_ms();
    const std::set<std::string> now_live(live_ids.begin(), live_ids.end());
    for (const auto& id : now_live) {
      Stmt s(impl_->db, sql::kUpsertLiveJob, what);
      if (auto st = s.bind(1, source).bind(2, id).bind(3, now).run(); !st) return st;
    }
    for (const auto& id : before) {
      if (now_live.count(id)) continue;
      Stmt s(impl_->db, sql::kEndJob, what);
      if (auto st = s.bind(1, source).bind(2, id).bind(3, now).run(); !st) return st;
    }
    return Status::ok();
  });
}

basil::Result<std::vector<JobRecord>> Store::list_jobs(bool live_only) {
  Stmt s(impl_->db, live_only ? sql::kSelectLiveJobs : sql::kSelectAllJobs, "list_jobs");
  return impl_->select_all<JobRecord>(
      s, [](const Stmt& st) { return basil::Result<JobRecord>(decode_job(st)); }, "list_jobs");
}

// ---- audit, node events, timings

basil::Status Store::audit(AuditEntry e) {
  return impl_->db.transact("audit", [&] {
    return impl_->insert_audit(e.kind, e.res_id, e.batch_id, e.user, e.nodes, {}, detail_or_empty_object(e.detail));
  });
}

basil::Result<std::vector<AuditEntry>> Store::list_audit(WallTime since, std::size_t limit) {
  Stmt s(impl_->db, sql::kSelectAudit, "list_audit");
  s.bind(1, to_ms(since)).bind(2, static_cast<std::int64_t>(std::min<std::size_t>(limit, INT64_MAX)));
  return impl_->select_all<AuditEntry>(s, decode_audit, "list_audit");
}

basil::Status Store::record_node_events(std::vector<NodeEvent> events) {
  return impl_->db.transact("record_node_events", [&]() -> Status {
    const std::int64_t now = impl_->db.now_ms();
    for (const auto& e : events) {
      Stmt s(impl_->db, sql::kInsertNodeEvent, "record_node_events");
      s.bind(1, now).bind(2, e.nid).bind(3, e.kind).bind(4, e.from).bind(5, e.to);
      if (auto st = s.bind(6, detail_or_empty_object(e.detail)).run(); !st) return st;
    }
    return Status::ok();
  });
}

basil::Result<std::vector<NodeEvent>> Store::list_node_events(WallTime since, std::size_t limit) {
  Stmt s(impl_->db, sql::kSelectNodeEvents, "list_node_events");
  s.bind(1, to_ms(since)).bind(2, static_cast<std::int64_t>(std::min<std::size_t>(limit, INT64_MAX)));
  return impl_->select_all<NodeEvent>(
      s,
      [](const Stmt& st) -> basil::Result<NodeEvent> {
        NodeEvent e;
        e.id = st.i64(0);
        e.time = from_ms(st.i64(1));
        auto nid = u32_of(st.i64(2), "nid");
        if (!nid) return nid.status();
        e.nid = *nid;
        e.kind = st.text(3);
        e.from = st.text(4);
        e.to = st.text(5);
        e.detail = st.text(6);
        return e;
      },
      "list_node_events");
}

basil::Status Store::save_timings(const std::vector<std::pair<std::string, std::string>>& snapshots) {
  return impl_->db.transact("save_timings", [&]() -> Status {
    const std::int64_t now = impl_->db.now_ms();
    for (const auto& [key, json] : snapshots) {
      Stmt s(impl_->db, sql::kUpsertTiming, "save_timings");
      if (auto st = s.bind(1, key).bind(2, json).bind(3, now).run(); !st) return st;
    }
    return Status::ok();
  });
}

basil::Result<std::vector<std::pair<std::string, std::string>>> Store::load_timings() {
  Stmt s(impl_->db, sql::kSelectTimings, "load_timings");
  using Row = std::pair<std::string, std::string>;
  return impl_->select_all<Row>(
      s, [](const Stmt& st) { return basil::Result<Row>(Row(st.text(0), st.text(1))); }, "load_timings");
}

basil::Status Store::save_engine_answer(const std::string& protocol, const std::string& xml) {
  return impl_->db.transact("save_engine_answer", [&]() -> Status {
    Stmt s(impl_->db, sql::kUpsertEngineAnswer, "save_engine_answer");
    return s.bind(1, protocol).bind(2, xml).bind(3, impl_->db.now_ms()).run();
  });
}

basil::Result<std::vector<std::pair<std::string, std::string>>> Store::load_engine_answers() {
  Stmt s(impl_->db, sql::kSelectEngineAnswers, "load_engine_answers");
  using Row = std::pair<std::string, std::string>;
  return impl_->select_all<Row>(
      s, [](const Stmt& st) { return basil::Result<Row>(Row(st.text(0), st.text(1))); }, "load_engine_answers");
}

}  // namespace basild
