#include "basild/calls/client.h"

#include "basild/core/request_kind.h"

#include <algorithm>
#include "basild/asio/asio.h"
#include <memory>
#include <random>
#include <type_traits>
#include <variant>

#include "basild/core/adoption.h"
#include "basild/core/switch_status.h"

namespace basild {

namespace asio = boost::asio;
using basil::Code;
using basil::Result;
using basil::Status;

namespace {

std::string with_diagnostics(std::string message, std::string_view diagnostics) {
  if (!diagnostics.empty()) {
    message += " [";
    message += diagnostics;
    message += ']';
  }
  return message;
}

bool version_mismatch(const basil::Response& r) {
  return std::any_of(r.messages.begin(), r.messages.end(), [](const basil::Message& m) {
    return m.text.find("BASIL version mismatch") != std::string::npos;
  });
}

// What the timings count as an answer: SUCCESS, and a RELEASE's "No entry
// for resId", ALPS's proof that the reservation is gone, which ends every
// release loop (basild's and a scheduler's).
bool answered(CallKind kind, const basil::Response& r) {
  return r.ok() || (kind == CallKind::kRelease && r.error().code() == Code::kReservationGone);
}

template <typename Body>
constexpr basil::Method method_of_body() {
  if constexpr (std::is_same_v<Body, basil::Reserved>) return basil::Method::kReserve;
  else if constexpr (std::is_same_v<Body, basil::Confirmed>) return basil::Method::kConfirm;
  else if constexpr (std::is_same_v<Body, basil::Released>) return basil::Method::kRelease;
  else if constexpr (std::is_same_v<Body, basil::Switched>) return basil::Method::kSwitch;
  else return basil::Method::kQuery;
}

// Adapts the callback port to an awaitable (any completion token); with
// `on_chunk`, Transport::async_stream.
template <typename Token>
auto async_transport_call(Transport& transport, std::string request, CallSpec spec,
                          Transport::ChunkHandler on_chunk, Token&& token) {
  return asio::async_initiate<Token, void(CallOutcome)>(
      [&transport](auto handler, std::string req, CallSpec s, Transport::ChunkHandler chunks) {
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        auto done = [shared](CallOutcome outcome) {
          auto ex = asio::get_associated_executor(*shared);
          asio::dispatch(ex, [shared, o = std::move(outcome)]() mutable { (*shared)(std::move(o)); });
        };
        if (chunks)
          transport.async_stream(std::move(req), s, std::move(chunks), std::move(done));
        else
          transport.async_call(std::move(req), s, std::move(done));
      },
      token, std::move(request), spec, std::move(on_chunk));
}

}  // namespace

Client::Client(asio::any_io_executor executor, Transport& transport, ClientOptions options,
               Timings* timings, CallObserver observer)
    : executor_(std::move(executor)),
      transport_(transport),
      options_(std::move(options)),
      timings_(timings),
      observer_(std::move(observer)) {}

void Client::observe(CallEvent::Phase phase, std::uint64_t call_id, CallKind kind, Caller caller,
                     std::string_view xml, const CallOutcome* outcome, std::string_view via) const {
  if (!observer_) return;
  CallEvent ev;
  ev.phase = phase;
  ev.call_id = call_id;
  ev.kind = kind;
  ev.caller = caller;
  ev.transport = via.empty() ? transport_.name() : via;
  ev.xml = xml;
  ev.when = std::chrono::system_clock::now();
  if (outcome != nullptr) {
    ev.transport_time = outcome->elapsed;
    ev.status = &outcome->status;
    ev.diagnostics = outcome->diagnostics;
  }
  observer_(ev);
}

Awaitable<CallOutcome> Client::transport_call(CallKind kind, std::string xml, std::uint64_t& call_id,
                                              Caller caller) {
  call_id = next_call_id_++;
  observe(CallEvent::Phase::kRequest, call_id, kind, caller, xml, nullptr);
  const bool query = kind == CallKind::kEngine || kind == CallKind::kInventory || kind == CallKind::kSummary ||
                     kind == CallKind::kStatus;
  CallOutcome outcome = co_await async_transport_call(transport_, std::move(xml), CallSpec(options_.call_timeout, query),
                                                      {}, asio::use_awaitable);
  observe(CallEvent::Phase::kResponse, call_id, kind, caller, outcome.response, &outcome);
  if (!outcome.status && options_.engine_memory != nullptr) options_.engine_memory->unsettle();
  co_return outcome;
}

Awaitable<Result<basil::Response>> Client::exchange(CallKind kind, const basil::Request& request) {
  auto xml = basil::encode_request(request);
  if (!xml) {
    if (timings_) timings_->record(kind, {}, {}, true);
    co_return xml.status();
  }
  std::uint64_t call_id = 0;
  CallOutcome outcome = co_await transport_call(kind, std::move(*xml), call_id);
  if (!outcome.status) {
    if (timings_) timings_->record(kind, outcome.elapsed, {}, true);
    co_return Status(outcome.status.code(),
                     with_diagnostics(outcome.status.message(), outcome.diagnostics));
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto decoded = basil::decode_response(outcome.response, options_.decode);
  const auto decode_time = std::chrono::steady_clock::now() - t0;
  auto fail = [&](Status s) {
    if (timings_) timings_->record(kind, outcome.elapsed, decode_time, true);
    return s;
  };
  if (!decoded) {
    const auto& s = decoded.status();
    const bool bad_bytes = s.code() == Code::kMalformed || s.code() == Code::kLimitExceeded;
    co_return fail(Status(bad_bytes ? Code::kTransport : s.code(),
                          with_diagnostics(std::string(bad_bytes ? "apbasil answer truncated or not XML: "
                                                                 : "apbasil answer invalid: ") +
                                               s.to_string(),
                                           outcome.diagnostics)));
  }
  basil::Response& response = *decoded;
  if (response.ok() ? response.protocol != request.protocol
                    : !(response.protocol.empty() || response.protocol == request.protocol)) {
    co_return fail(Status(Code::kStructure, "protocol mismatch: sent " + request.protocol +
                                                ", answered \"" + response.protocol + "\""));
  }
  if (!response.ok()) {
    if (version_mismatch(response)) dialect_.reset();  // negotiate again next time
    if (!answered(kind, response)) co_return fail(response.error());
    if (timings_) timings_->record(kind, outcome.elapsed, decode_time, false);
    co_return response.error();
  }
  if (timings_) timings_->record(kind, outcome.elapsed, decode_time, false);
  if (kind == CallKind::kEngine && options_.engine_memory != nullptr)
    options_.engine_memory->learn(request.protocol, outcome.response, response, std::chrono::steady_clock::now());
  co_return std::move(response);
}

template <typename Body>
Awaitable<Result<Body>> Client::typed_call(CallKind kind, basil::Request request) {
  auto r = co_await exchange(kind, request);
  if (!r) co_return r.status();
  if (r->method != method_of_body<Body>() || !std::holds_alternative<Body>(r->body)) {
    co_return Status(Code::kStructure, std::string("answer to ") + std::string(call_kind_name(kind)) +
                                           " is not of that method (method " +
                                           std::string(basil::to_string(r->method)) + ")");
  }
  co_return std::get<Body>(std::move(r->body));
}

Awaitable<Result<NegotiatedEngine>> Client::negotiate() {
  // Always at protocol 1.0, the lowest common denominator.
  auto engine = co_await typed_call<basil::EngineInfo>(
      CallKind::kEngine, basil::make_request(basil::Dialect::k1_0, basil::EngineQuery{}));
  if (!engine) co_return engine.status();
  auto chosen = basil::negotiate(engine->version, engine->basil_support, options_.pinned);
  if (!chosen) {
    std::string supports;
    for (const auto& v : engine->basil_support) supports += (supports.empty() ? "" : ",") + v;
    std::string msg = "no common BASIL version with ALPS engine " + engine->version + " (supports " +
                      (supports.empty() ? std::string("1.0,1.1 (assumed)") : supports) + ")";
    if (options_.pinned) msg += ", pinned " + std::string(basil::dialect_id(*options_.pinned));
    co_return Status(Code::kUnsupportedProtocol, std::move(msg));
  }
  dialect_ = *chosen;
  engine_ = *engine;
  co_return NegotiatedEngine{std::move(*engine), *chosen};
}

Awaitable<Result<NegotiatedEngine>> Client::renegotiate() {
  dialect_.reset();
  engine_.reset();
  co_return co_await negotiate();
}

Awaitable<Status> Client::ensure_dialect() {
  if (dialect_) co_return Status::ok();
  auto r = co_await negotiate();
  co_return r.status();
}

#define BASILD_ENSURE_DIALECT()                   \
  do {                                            \
    auto st_ = co_await ensure_dialect();         \
    if (!st_) co_return st_;                      \
  } while (false)

Awaitable<Result<basil::Inventory>> Client::query_inventory(basil::InventoryQuery query) {
  BASILD_ENSURE_DIALECT();
  co_return co_await typed_call<basil::Inventory>(CallKind::kInventory,
                                                  basil::make_request(*dialect_, query));
}

Awaitable<Result<basil::Summary>> Client::query_summary() {
  BASILD_ENSURE_DIALECT();
  co_return co_await typed_call<basil::Summary>(CallKind::kSummary,
                                                basil::make_request(*dialect_, basil::SummaryQuery{}));
}

Awaitable<Result<basil::StatusInfo>> Client::query_status(basil::StatusQuery query) {
  BASILD_ENSURE_DIALECT();
  co_return co_await typed_call<basil::StatusInfo>(CallKind::kStatus,
                                                   basil::make_request(*dialect_, std::move(query)));
}

Awaitable<Result<basil::Reserved>> Client::reserve(basil::ReserveRequest request) {
  if (!request.batch_id || request.batch_id->empty()) {
    co_return Status(Code::kInvalidValue, "RESERVE without a batch id");
  }
  BASILD_ENSURE_DIALECT();
  co_return co_await typed_call<basil::Reserved>(CallKind::kReserve,
                                                 basil::make_request(*dialect_, std::move(request)));
}

Awaitable<Result<ReserveOutcome>> Client::reserve_or_adopt(basil::ReserveRequest request) {
  if (!request.batch_id || request.batch_id->empty()) {
    co_return Status(Code::kInvalidValue, "RESERVE without a batch id");
  }
  auto inventory = co_await query_inventory();
  if (!inventory) co_return inventory.status();
  if (auto match = find_adoptable_reservation(*inventory, request)) {
    ReserveOutcome out;
    out.adopted = true;
    out.reserved.reservation_id = match->reservation_id;
    out.reserved.has_reserved_nodes = inventory->has_node_array;
    out.reserved.reserved_nodes = std::move(match->nodes);
    co_return out;
  }
  auto reserved = co_await reserve(std::move(request));
  if (!reserved) co_return reserved.status();
  co_return ReserveOutcome{std::move(*reserved), false};
}

Awaitable<Result<basil::Confirmed>> Client::confirm(basil::ConfirmRequest request) {
  BASILD_ENSURE_DIALECT();
  // The encoder writes pagg_id as admin_cookie in 1.0 and 1.1, and job_name
  // only in 1.0.
  if (*dialect_ != basil::Dialect::k1_0) request.job_name.reset();
  co_return co_await typed_call<basil::Confirmed>(CallKind::kConfirm,
                                                  basil::make_request(*dialect_, std::move(request)));
}

Awaitable<Result<basil::Confirmed>> Client::confirm_granted(basil::ConfirmRequest request,
                                                            std::vector<std::chrono::milliseconds> waits) {
  auto r = co_await confirm(request);
  for (const auto wait : waits) {
    if (r || r.status().code() != Code::kReservationUnknown) break;
    asio::steady_timer timer(executor_, wait);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    r = co_await confirm(request);
  }
  co_return r;
}

Awaitable<Result<basil::Released>> Client::release_once(basil::ReleaseRequest request) {
  BASILD_ENSURE_DIALECT();
  co_return co_await typed_call<basil::Released>(CallKind::kRelease,
                                                 basil::make_request(*dialect_, std::move(request)));
}

std::chrono::milliseconds jittered(std::chrono::milliseconds delay, double unit) {
  const double share = std::clamp(unit, 0.0, 1.0) * 0.3;
  return delay + std::chrono::milliseconds(static_cast<std::int64_t>(static_cast<double>(delay.count()) * share));
}

Awaitable<Result<ReleaseOutcome>> Client::release(basil::ReleaseRequest request) {
  thread_local std::minstd_rand dice{std::random_device{}()};
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const auto policy = options_.release;
  const auto start = std::chrono::steady_clock::now();
  auto delay = std::max(policy.initial_delay, std::chrono::milliseconds{1});
  ReleaseOutcome out;
  out.reservation_id = request.reservation_id;
  Status last;
  for (;;) {
    ++out.attempts;
    auto r = co_await release_once(request);
    if (r) {
      out.last_claims = r->claims;
      if (r->claims && *r->claims == 0) co_return out;
      last = Status(Code::kTimeout, r->claims ? std::to_string(*r->claims) + " claims outstanding"
                                              : std::string("no \"No entry for resId\" yet"));
    } else if (r.status().code() == Code::kReservationGone) {
      out.no_entry = true;
      co_return out;
    } else if (!r.status().transient()) {
      co_return r.status();
    } else {
      last = r.status();
    }
    const auto elapsed = std::chrono::steady_clock::now() - start;
    const auto wait = jittered(delay, unit(dice));
    if (elapsed + wait > policy.limit) {
      co_return Status(Code::kTimeout,
                       "reservation " + std::to_string(request.reservation_id) + " not gone after " +
                           std::to_string(out.attempts) + " RELEASE calls: " + last.message());
    }
    asio::steady_timer timer(executor_, wait);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    delay = std::min(delay * 2, std::max(policy.max_delay, policy.initial_delay));
  }
}

std::optional<std::string> switch_not_done(const basil::Switched& answer) {
  auto first_not_done = [](const std::vector<basil::ItemResult>& items, std::string_view what)
      -> std::optional<std::string> {
    for (const auto& i : items)
      if (i.status != basil::ItemStatus::kSuccess)
        return "SWITCH of " + std::string(what) + " " + std::to_string(i.id) + " did not happen: " +
               std::string(basil::to_string(i.status));
    return std::nullopt;
  };
  if (auto r = first_not_done(answer.reservations, "reservation")) return r;
  return first_not_done(answer.applications, "application");
}

Awaitable<Result<basil::Switched>> Client::switch_state(basil::SwitchRequest request) {
  BASILD_ENSURE_DIALECT();
  auto r = co_await typed_call<basil::Switched>(CallKind::kSwitch, basil::make_request(*dialect_, std::move(request)));
  if (!r) co_return r;
  if (auto why = switch_not_done(*r)) co_return Status(Code::kAlpsPermanent, std::move(*why));
  co_return r;
}

Awaitable<Result<SwitchOutcome>> Client::switch_confirmed(std::uint64_t reservation_id, bool out) {
  const SwitchPolicy policy = options_.switching;
  const auto start = std::chrono::steady_clock::now();
  const auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t);
  };
  basil::SwitchRequest sw;
  sw.reservations.push_back({reservation_id, out ? basil::SwitchAction::kOut : basil::SwitchAction::kIn});
  basil::StatusQuery query;
  query.reservation_ids = {reservation_id};
  SwitchOutcome outcome;
  std::optional<std::chrono::steady_clock::time_point> answered;  // the SWITCH's SUCCESS
  // A SWITCH that ALPS refuses PERMANENT: STATUS decides once, because the
  // reservation may already be where it was sent (a SWITCH sent again after
  // a lost answer; one sent again by a basild restarted mid-switch). Our
  // emulator takes a switch to where the reservation is as done; a real
  // ALPS may refuse it.
  std::optional<Status> refused;
  std::string last = "no answer yet";
  auto delay = std::max(policy.initial_delay, std::chrono::milliseconds{1});
  for (;;) {
    if (!answered) {
      ++outcome.switches;
      auto r = co_await switch_state(sw);
      if (r) {
        answered = std::chrono::steady_clock::now();
      } else if (!r.status().transient()) {
        refused = r.status();
        answered = std::chrono::steady_clock::now();
      } else {
        last = "SWITCH: " + r.status().message();
      }
    }
    ++outcome.status_queries;
    auto st = co_await query_status(query);
    if (st && st->reservations.size() == 1) {
      outcome.last = st->reservations[0].status;
      // Before the SWITCH's own SUCCESS, an EMPTY counts from the first call.
      const SwitchReading reading =
          read_switch_status(out, outcome.last, since(answered.value_or(start)), policy.empty_final_after);
      if (reading.progress == SwitchProgress::kDone) co_return outcome;
      if (refused) co_return *refused;
      if (reading.progress == SwitchProgress::kFailed)
        co_return Status(Code::kAlpsPermanent, "reservation " + std::to_string(reservation_id) + ": " + reading.why);
      last = reading.why;
    } else if (!st) {
      if (refused) co_return *refused;
      if (!st.status().transient()) co_return st.status();
      last = "STATUS: " + st.status().message();
    }
    if (since(start) + delay > policy.limit)
      co_return Status(Code::kTimeout, "SWITCH " + std::string(out ? "OUT" : "IN") + " of reservation " +
                                           std::to_string(reservation_id) + " not confirmed after " +
                                           std::to_string(policy.limit.count()) + " ms: " + last);
    asio::steady_timer timer(executor_, delay);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    delay = std::min(delay * 2, std::max(policy.max_delay, policy.initial_delay));
  }
}

Awaitable<Result<std::uint64_t>> Client::forward_stream(std::string request_xml, RequestKind kind,
                                                        Transport::ChunkHandler on_chunk,
                                                        std::function<void(const basil::Status&)> on_end) {
  constexpr std::size_t kHead = 4096;  // holds ResponseData's start tag
  const std::uint64_t call_id = next_call_id_++;
  observe(CallEvent::Phase::kRequest, call_id, kind.call, Caller::kForwarded, request_xml, nullptr);
  // The answer's head, to count a FAILURE; all of it only for the XML log.
  auto seen = std::make_shared<std::string>();
  auto bytes = std::make_shared<std::uint64_t>(0);
  const bool keep_all = static_cast<bool>(observer_);
  auto relay = [seen, bytes, keep_all, on_chunk = std::move(on_chunk)](std::string piece) {
    *bytes += piece.size();
    if (keep_all) {
      seen->append(piece);
    } else if (seen->size() < kHead) {
      seen->append(piece, 0, kHead - seen->size());
    }
    on_chunk(std::move(piece));
  };
  CallOutcome outcome = co_await async_transport_call(transport_, std::move(request_xml),
                                                      CallSpec(options_.call_timeout, kind.query), std::move(relay),
                                                      asio::use_awaitable);
  const Status ended = outcome.status ? Status::ok()
                                      : Status(outcome.status.code(),
                                               with_diagnostics(outcome.status.message(), outcome.diagnostics));
  if (on_end) on_end(ended);
  observe(CallEvent::Phase::kResponse, call_id, kind.call, Caller::kForwarded, *seen, &outcome);
  if (!outcome.status && options_.engine_memory != nullptr) options_.engine_memory->unsettle();
  if (timings_) {
    const bool failed = !outcome.status || !is_success_answer(*seen);
    timings_->record(kind.call, outcome.elapsed, {}, failed, Caller::kForwarded);
  }
  if (!ended) co_return ended;
  co_return *bytes;
}

// A forwarded ENGINE answered with the fresh answer ALPS gave before: in
// the XML log as a call whose transport is "memory", in no timing.
std::optional<std::string> Client::reuse_engine_answer(const RequestKind& kind, std::string_view request_xml) {
  if (!kind.engine || options_.engine_memory == nullptr) return std::nullopt;
  auto kept = options_.engine_memory->reuse(kind.protocol, std::chrono::steady_clock::now(), options_.engine_max_age);
  if (!kept || !observer_) return kept;
  const std::uint64_t call_id = next_call_id_++;
  const CallOutcome outcome{Status::ok(), {}, "answered from basild's engine memory", {}};
  observe(CallEvent::Phase::kRequest, call_id, kind.call, Caller::kForwarded, request_xml, nullptr, "memory");
  observe(CallEvent::Phase::kResponse, call_id, kind.call, Caller::kForwarded, *kept, &outcome, "memory");
  return kept;
}

std::optional<std::string> Client::engine_after(const RequestKind& kind, const CallOutcome& outcome,
                                                const Result<basil::Response>& decoded) {
  if (!kind.engine || options_.engine_memory == nullptr) return std::nullopt;
  const bool good = outcome.status && decoded && decoded->ok() && std::holds_alternative<basil::EngineInfo>(decoded->body);
  if (good) {
    options_.engine_memory->learn(kind.protocol, outcome.response, *decoded, std::chrono::steady_clock::now());
    return std::nullopt;
  }
  return options_.engine_memory->recall(kind.protocol);
}

Awaitable<Result<Forwarded>> Client::forward(std::string request_xml, RequestKind kind) {
  if (auto kept = reuse_engine_answer(kind, request_xml)) co_return Forwarded{std::move(*kept), std::nullopt};
  std::uint64_t call_id = 0;
  CallOutcome outcome = co_await transport_call(kind.call, std::move(request_xml), call_id, Caller::kForwarded);
  co_return forwarded(kind, std::move(outcome));
}

Result<Forwarded> Client::forwarded(const RequestKind& kind, CallOutcome outcome) {
  // Decoded once, here, for the timings, the engine memory and the caller;
  // a request that did not decode has an answer nobody learns from.
  Result<basil::Response> decoded = Status(Code::kInvalidValue, "not decoded");
  if (outcome.status && kind.valid) decoded = basil::decode_response(outcome.response, options_.decode);
  auto kept = engine_after(kind, outcome, decoded);
  if (timings_) {
    // An ENGINE answered from basild's memory is an answer the scheduler got
    // (basild_engine_from_memory_total counts them apart).
    const bool failed = !kept && (!outcome.status || (kind.valid ? !decoded || !answered(kind.call, *decoded)
                                                                 : !is_success_answer(outcome.response)));
    timings_->record(kind.call, outcome.elapsed, {}, failed, Caller::kForwarded);
  }
  if (kept) return Forwarded{std::move(*kept), std::nullopt};
  if (!outcome.status)
    return Status(outcome.status.code(), with_diagnostics(outcome.status.message(), outcome.diagnostics));
  Forwarded out{std::move(outcome.response), std::nullopt};
  if (decoded) out.decoded = std::move(*decoded);
  return out;
}

}  // namespace basild
