#include "basild/daemon/forwarder.h"

#include "basil_proto/codec.h"
#include "basild/control/http_request.h"
#include "basild/core/state_store_replay.h"
#include "basild/daemon/replies.h"

namespace basild {

using nlohmann::json;

void release_stray(ReconcileRunner& runner, const ReservationRecord& rec) {
  runner.execute(release_candidate(rec.res_id, rec.batch_id, rec.user, rec.nodes, CandidateKind::kStray,
                                   "the forwarded RESERVE's answer never reached its caller, who will reserve again"));
}

Forwarder::Forwarder(CallParts parts, bool strict_decode) : parts_(parts), learner_(parts.io) {
  decode_options_.strict = strict_decode;
}

// A raw request forwarded for a scheduler (apbasil_proxy): basild learns
// the job's reservation from a RESERVE it answered, so that a retried
// RESERVE's first reservation is recognised as a stray.
void Forwarder::learn_from_forward(const basil::Request& req, const basil::Response& resp) {
  const auto* confirm = std::get_if<basil::ConfirmRequest>(&req.body);
  const auto* release = std::get_if<basil::ReleaseRequest>(&req.body);
  if (release != nullptr) return learn_forwarded_release(release->reservation_id, resp);
  if (!resp.ok() || confirm == nullptr) return;  // a forwarded RESERVE is recorded through its intent
  auto rec = parts_.store.find(confirm->reservation_id);
  if (rec && *rec && !is_terminal((*rec)->state))
    note_recorded("CONFIRM", confirm->reservation_id,
                  parts_.store.mark_confirmed(confirm->reservation_id, confirm->pagg_id));
}

// POST /v1/basil: a scheduler's request, sent on untouched; its answer
// passed back untouched. A RESERVE with a batch id is an intent first
// (committed before the call), and the reservation ALPS granted is
// recorded before the caller hears of it (a CONFIRM or RELEASE is
// recorded just after its caller has heard); an answer that does not reach
// the caller (basild killed mid-call, the caller gone) leaves a stray,
// released as one: the caller was told the call failed and reserves again.
//
// The request is decoded once, here, on the loop (it is at most
// [apbasil] max_request_bytes, and the decoder's limits on depth and
// attributes per element refuse a hostile one at once); the answer is
// decoded once, by the client. A request over the decoder's limits is
// refused here; one that does not decode otherwise goes on untouched, and
// apbasil says what is wrong with it.
void Forwarder::forward(const control::Request& req, control::Responder reply) {
  const auto f = req.query.find("failures");
  const bool basil_failures = f != req.query.end() && f->second == "basil";
  auto body = std::make_shared<const std::string>(req.body);
  Fail fail = [body, basil_failures](const basil::Status& s) {
    return basil_failures ? basil_failure_reply(*body, s) : error_reply(s);
  };
  auto decoded = basil::decode_request(*body, basil::DecodeOptions{});
  if (!decoded && decoded.status().code() == basil::Code::kLimitExceeded) return reply(fail(decoded.status()));
  std::shared_ptr<const basil::Request> request;
  if (decoded) request = std::make_shared<const basil::Request>(std::move(*decoded));
  const RequestKind kind = request_kind(request.get());
  if (kind.call == CallKind::kInventory) return forward_streamed(*body, kind, reply, fail);
  if (request && !kind.query) audit_change(req.peer, *request);
  std::optional<std::int64_t> intent;  // set only for a RESERVE with a batch id
  const auto* reserve = request ? std::get_if<basil::ReserveRequest>(&request->body) : nullptr;
  if (reserve != nullptr && reserve->batch_id && !reserve->batch_id->empty()) {
    auto id = parts_.store.record_intent(*reserve->batch_id, reserve->user_name, *body, /*forwarded=*/true);
    if (!id) return reply(fail(basil::Status(basil::Code::kBusy, "the state database cannot record the RESERVE: " +
                                                                     id.status().to_string())));
    intent = *id;
    parts_.poller.order().intent_started(*id);
  }
  auto self = shared_from_this();
  co_spawn_result<Forwarded>(parts_.io.get_executor(), parts_.client.forward(*body, kind),
                             [self, reply, request, intent, fail](basil::Result<Forwarded> r) {
                               self->answered(std::move(r), request, intent, reply, fail);
                             });
}

// A forwarded change, with its caller, before it is sent.
void Forwarder::audit_change(const control::PeerCredentials& peer, const basil::Request& request) {
  std::optional<std::uint64_t> res_id;
  std::string batch_id;
  std::visit(
      [&](const auto& b) {
        using B = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<B, basil::ReserveRequest>) batch_id = b.batch_id.value_or("");
        if constexpr (std::is_same_v<B, basil::ConfirmRequest> || std::is_same_v<B, basil::ReleaseRequest>)
          res_id = b.reservation_id;
        if constexpr (std::is_same_v<B, basil::SwitchRequest>)
          if (b.reservations.size() == 1) res_id = b.reservations.front().id;
      },
      request.body);
  parts_.requests.record(peer, basil::to_string(request.method()), res_id, std::move(batch_id));
}

// A forwarded call's answer (`request` null when it did not decode).
void Forwarder::answered(basil::Result<Forwarded> r, std::shared_ptr<const basil::Request> request,
                         std::optional<std::int64_t> intent, control::Responder reply, Fail fail) {
  if (intent) parts_.poller.order().intent_ended(*intent);
  if (!r) return reply(fail(r.status()));  // a pending intent: the next INVENTORY settles it
  if (intent)
    return reserve_answered(std::get<basil::ReserveRequest>(request->body), *intent, r->xml,
                            r->decoded ? &*r->decoded : nullptr, reply, fail);
  reply(control::Response::text(std::move(r->xml), "application/xml"));
  // A CONFIRM or RELEASE: its caller has heard first (its answer does not
  // depend on the record); basild learns in a handler posted behind the
  // reply's, so the answer leaves before the database is written.
  if (!request || !r->decoded ||
      !(std::holds_alternative<basil::ConfirmRequest>(request->body) ||
        std::holds_alternative<basil::ReleaseRequest>(request->body)))
    return;
  boost::asio::post(parts_.io, [self = shared_from_this(), request, answer = std::move(*r->decoded)] {
    self->learn_from_forward(*request, answer);
  });
}

// A forwarded RESERVE's answer: the grant recorded before its caller hears
// of it, then the answer passed on untouched.
void Forwarder::reserve_answered(const basil::ReserveRequest& reserve, std::int64_t intent, const std::string& answer,
                                 const basil::Response* resp, control::Responder reply, Fail fail) {
  control::Response out = control::Response::text(answer, "application/xml");
  auto granted = record_forwarded_reserve(intent, reserve, resp);
  if (!granted) return reply(fail(granted.status()));  // unrecorded: a stray at the next INVENTORY
  if (*granted) {
    out.on_sent = [self = shared_from_this(), rec = **granted](bool written) {
      if (!written) release_stray(self->parts_.runner, rec);
    };
  }
  reply(std::move(out));
}

// A forwarded INVENTORY, the longest answer a scheduler asks for (8.9 MB
// on a 2256-node XC30, before every scheduling pass): passed on as it
// arrives (chunked), so that the caller has it a moment after ALPS wrote
// it, and decoded beside the stream for basild's own view when that is due
// (the learner, on a thread of its own). An error after a part went out
// cuts the response: the caller sees an answer that broke, never a
// shorter one that looks whole.
void Forwarder::forward_streamed(const std::string& request, const RequestKind& kind, control::Responder reply,
                                 Fail fail) {
  struct Relay {
    std::shared_ptr<control::BodyStream> out;
    bool learning = false;
  };
  auto relay = std::make_shared<Relay>();
  auto self = shared_from_this();
  const SteadyTime started = parts_.clock.steady();
  // The INVENTORY's ticket is taken now, as the query goes out, and kept
  // here on the loop's side (the decoder's thread never holds it) until
  // the decoded answer is learnt or the decode is given up.
  const std::uint64_t key = ++learning_key_;
  relay->learning = parts_.poller.learning_due() && learner_.begin(decode_options_, [self, started, key](basil::Result<basil::Decoded> r) {
    auto node = self->learning_.extract(key);
    if (node.empty()) return;
    if (r && !r->is_request() && r->response().ok())
      if (auto* inv = std::get_if<basil::Inventory>(&r->response().body))
        self->parts_.poller.learn_inventory(std::move(*inv), started, node.mapped());
  });
  if (relay->learning) learning_.emplace(key, parts_.poller.order().inventory_sent());
  auto on_chunk = [self, relay, reply](std::string piece) {
    if (!relay->out) relay->out = reply.stream("application/xml");
    if (relay->learning) self->learner_.feed(piece);
    // A caller gone: the call still ends, and is learnt.
    relay->out->write(std::move(piece));
  };
  auto on_end = [self, relay, reply, fail, key](const basil::Status& st) {
    if (!st) {
      if (relay->learning) {
        self->learner_.cancel();
        self->learning_.erase(key);
      }
      if (relay->out) return relay->out->abort();
      return reply(fail(st));
    }
    if (relay->learning) self->learner_.end();
    if (!relay->out) relay->out = reply.stream("application/xml");
    relay->out->finish();
  };
  co_spawn_result<std::uint64_t>(parts_.io.get_executor(),
                                 parts_.client.forward_stream(request, kind, on_chunk, on_end),
                                 [](basil::Result<std::uint64_t>) {});
}

// A forwarded RESERVE's answer: the granted reservation recorded (its
// intent granted), or the intent dropped when ALPS refused. nullopt when
// nothing was granted; an error when the record could not be written.
basil::Result<std::optional<ReservationRecord>> Forwarder::record_forwarded_reserve(std::int64_t intent,
                                                                                   const basil::ReserveRequest& reserve,
                                                                                   const basil::Response* resp) {
  const auto* reserved = resp != nullptr ? std::get_if<basil::Reserved>(&resp->body) : nullptr;
  if (reserved == nullptr || !resp->ok()) {
    if (resp != nullptr && !resp->ok()) note(parts_.store.settle_intent_dropped(intent, "ALPS refused the forwarded RESERVE"));
    return std::optional<ReservationRecord>();
  }
  ReservationRecord rec;
  rec.res_id = reserved->reservation_id;
  rec.batch_id = *reserve.batch_id;
  rec.user = reserve.user_name;
  rec.account = reserve.account_name.value_or("DEFAULT");
  rec.nodes = basil::NidList::from_nids(reserved->reserved_nodes);
  for (const auto& p : reserve.params) rec.width += p.width;
  if (!reserve.params.empty()) {
    rec.depth = reserve.params.front().depth.value_or(1);
    rec.nppn = reserve.params.front().nppn.value_or(0);
    rec.nppcu = reserve.params.front().nppcu.value_or(0);
  }
  rec.origin = ResOrigin::kReserved;
  if (auto st = parts_.store.record_reserved(intent, rec); !st) return st;
  parts_.log.debug("B0306", "ALPS reservation " + std::to_string(rec.res_id) + " for job " + rec.batch_id +
                        " (forwarded RESERVE) on " + rec.nodes.format());
  return std::optional<ReservationRecord>(std::move(rec));
}

// POST /v1/apkill {"apid": N, "signal": S}: a scheduler signals one of its
// jobs' aprun applications (Slurm runs cray.conf's apkill on scancel),
// where ALPS is: through the ssh conduit on the main system, else the
// local [reconcile] apkill. Only an aprun application of a reservation
// made for a batch job (batch_id not UNKNOWN) in ALPS's inventory, which
// is refreshed once when the apid is not in it yet: an allowed caller
// cannot signal anything else as basild's ALPS account.
void Forwarder::apkill(const json& body, control::Responder reply) {
  auto bad = [&](const std::string& m) { reply(error_reply(basil::Status(basil::Code::kInvalidValue, m))); };
  if (!body.contains("apid") || !body["apid"].is_number_unsigned()) return bad("apkill: \"apid\" (a number) is required");
  if (!body.contains("signal") || !body["signal"].is_number_integer()) return bad("apkill: \"signal\" (1..64) is required");
  for (const auto& [key, _] : body.items())
    if (key != "apid" && key != "signal") return bad("apkill: unknown key \"" + key + "\"");
  const auto apid = body["apid"].get<std::uint64_t>();
  const auto signal = body["signal"].get<std::int64_t>();
  if (signal < 1 || signal > 64) return bad("apkill: signal " + std::to_string(signal) + " is outside 1..64");
  auto self = shared_from_this();
  auto run = [self, apid, signal = static_cast<int>(signal), reply]() {
    const auto owner = self->batch_reservation_of(apid);
    if (!owner)
      return reply(error_reply(basil::Status(basil::Code::kReservationUnknown,
                                             "apkill: no aprun application " + std::to_string(apid) +
                                                 " of a batch job's reservation in ALPS's inventory")));
    AuditEntry e;
    e.kind = "apkill";
    e.res_id = owner->reservation_id;
    e.batch_id = owner->batch_id.value_or("");
    e.user = owner->user_name;
    e.detail = json{{"apids", {apid}}, {"signal", signal}, {"caller", "forwarded"}}.dump();
    self->note(self->parts_.audit.audit(e));
    self->parts_.apkill.apkill(apid, signal, [self, apid, signal, reply](CallOutcome o) {
      if (!o.status) {
        self->parts_.log.warning("B0423", "apkill -" + std::to_string(signal) + " " + std::to_string(apid) +
                                       " (forwarded) failed: " + o.status.message());
        return reply(error_reply(o.status));
      }
      reply(control::Response::json({{"apid", apid}, {"signal", signal}, {"result", "signalled"}}));
    });
  };
  if (batch_reservation_of(apid)) return run();
  parts_.poller.demand_inventory([run](basil::Status) { run(); });  // an aprun newer than the cached inventory
}

// The batch reservation whose aprun application `apid` is, in the cached
// inventory.
std::optional<basil::Reservation> Forwarder::batch_reservation_of(std::uint64_t apid) const {
  const auto& inventory = parts_.poller.inventory();
  if (!inventory) return std::nullopt;
  for (const auto& r : inventory->reservations) {
    if (!r.batch_id || r.batch_id->empty() || *r.batch_id == "UNKNOWN") continue;
    for (const auto& a : r.applications)
      if (a.application_id == apid && a.time_stamp != 0) return r;
  }
  return std::nullopt;
}

// A scheduler's own RELEASE (slurmstepd at a job's end): the reservation
// is on its way out, so its disappearing from INVENTORY is no news.
// Proven gone by claims 0 or "No entry for resId"; releasing while claims
// remain (and before dialect 1.2, which has no claims).
void Forwarder::learn_forwarded_release(std::uint64_t res_id, const basil::Response& resp) {
  auto rec = parts_.store.find(res_id);
  if (!rec || !*rec || is_terminal((*rec)->state)) return;
  if (!resp.ok()) {
    if (resp.error().code() == basil::Code::kReservationGone)
      note_recorded("RELEASE", res_id,
                    parts_.store.mark_released(res_id, "forwarded RELEASE: ALPS has no entry for it"));
    return;
  }
  const auto* released = std::get_if<basil::Released>(&resp.body);
  if (released != nullptr && released->claims && *released->claims == 0) {
    note_recorded("RELEASE", res_id, parts_.store.mark_released(res_id, "forwarded RELEASE: claims 0"));
    parts_.log.debug("B0307", "reservation " + std::to_string(res_id) + " released by the scheduler (forwarded RELEASE)");
  } else if ((*rec)->state != ResState::kReleasing) {
    note_recorded("RELEASE", res_id, parts_.store.mark_releasing(res_id, "forwarded RELEASE: claims remain"));
  }
}


void Forwarder::note(const basil::Status& s) {
  note_state_failure(parts_.log, s);
}

// A forwarded CONFIRM's or RELEASE's outcome, recorded: the caller has
// ALPS's answer either way; a record the database failed is kept and
// written when it takes writes again (basild/core/state_store_replay.h).
void Forwarder::note_recorded(std::string_view call, std::uint64_t res_id, const basil::Status& s) {
  if (!is_database_failure(s)) return note(s);
  parts_.log.error("B0250", "forwarded " + std::string(call) + " of reservation " + std::to_string(res_id) +
                                ": ALPS's answer passed on, but basild could not record it (" + s.to_string() +
                                "); basild records it when the state database takes writes again");
}

}  // namespace basild
