// The typed BASIL client over any Transport: version negotiation, the typed
// methods, the RELEASE loop, a raw forward; every call timed and observed
// (the XML log hangs off the observer). C++20 coroutines on Boost.Asio:
// every method is an awaitable run on the client's executor; use
// co_spawn_result() to start one from callback code, so that no exception
// ever escapes an Asio handler.
//
// Errors: a transport failure keeps its code (kTransport / kTimeout,
// transient) with the transport's diagnostics in the message; an answer that
// is truncated or not XML (decoder kMalformed, kLimitExceeded) is kTransport
// (transient); a well-formed answer that is not a valid BASIL response of the
// right method keeps the decoder's code (permanent: retrying will not help);
// a BASIL FAILURE maps through basil::Response::error().
#pragma once

#include "basild/asio/asio.h"
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "basil_proto/codec.h"
#include "basil_proto/model.h"
#include "basil_proto/status.h"
#include "basild/core/engine_memory.h"
#include "basild/core/request_kind.h"
#include "basild/core/timings.h"
#include "basild/core/transport.h"

namespace basild {

template <typename T>
using Awaitable = boost::asio::awaitable<T>;

// Backoff of the RELEASE loop: delays initial, 2x initial, ... capped at
// max_delay, until the reservation is proven gone or `limit` has passed.
// RELEASE repeated until ALPS proves the reservation gone: waits doubling
// from initial_delay to max_delay, each lengthened by a random 0 to 30%
// (the jitter Cray asked of PBS: 0.4 s + 0-0.12 s), so that the loops of
// many reservations released together do not reach ALPS in step.
struct ReleasePolicy {
  std::chrono::milliseconds initial_delay{250};
  std::chrono::milliseconds max_delay{8'000};
  std::chrono::milliseconds limit{600'000};  // PBS's alps_release_timeout
};
// A wait of `delay` with its jitter: `delay` plus `unit` (0 to 1) times 30% of it.
std::chrono::milliseconds jittered(std::chrono::milliseconds delay, double unit);

// How long a SWITCH is followed with QUERY STATUS (switch_confirmed): the
// first STATUS after `initial_delay`, doubling to `max_delay`, for at most
// `limit` in all (PBS: alps_confirm_switch_timeout, 35 s); an EMPTY during
// a SWITCH OUT is believed after `empty_final_after` (PBS: 10 s).
struct SwitchPolicy {
  std::chrono::milliseconds initial_delay{100};
  std::chrono::milliseconds max_delay{1'000};
  std::chrono::milliseconds limit{35'000};
  std::chrono::milliseconds empty_final_after{10'000};
};

struct ClientOptions {
  std::chrono::milliseconds call_timeout = kDefaultCallTimeout;
  std::optional<basil::Dialect> pinned;  // configured BASIL version
  ReleasePolicy release;
  SwitchPolicy switching;
  basil::DecodeOptions decode;
  // Learns every good ENGINE answer; forward() answers an ENGINE that ALPS
  // does not answer from it, and one asked while ALPS's answer is younger
  // than engine_max_age (0: never). Must outlive the client; null: none.
  EngineMemory* engine_memory = nullptr;
  std::chrono::milliseconds engine_max_age{0};
};

// One event per request sent and per answer received (or failure), for the
// XML log. Views are valid during the callback only.
struct CallEvent {
  enum class Phase : std::uint8_t { kRequest, kResponse };
  Phase phase = Phase::kRequest;
  std::uint64_t call_id = 0;
  CallKind kind = CallKind::kRaw;
  Caller caller = Caller::kBasild;  // kForwarded for forward()
  std::string_view transport;
  std::string_view xml;
  std::chrono::system_clock::time_point when;
  std::chrono::nanoseconds transport_time{0};  // responses
  const basil::Status* status = nullptr;       // responses: the transport's status
  std::string_view diagnostics;                // responses
};
using CallObserver = std::function<void(const CallEvent&)>;

struct NegotiatedEngine {
  basil::EngineInfo engine;
  basil::Dialect dialect = basil::Dialect::k1_0;
};

struct ReserveOutcome {
  basil::Reserved reserved;
  bool adopted = false;  // found in the INVENTORY instead of reserved anew
};

struct ReleaseOutcome {
  std::uint64_t reservation_id = 0;
  unsigned attempts = 0;            // RELEASE calls made
  bool no_entry = false;            // proven by "No entry for resId" (else by claims 0)
  std::optional<std::uint64_t> last_claims;
};

struct SwitchOutcome {
  unsigned switches = 0;        // SWITCH calls sent (more than one after a lost answer)
  unsigned status_queries = 0;  // QUERY STATUS calls
  basil::ItemStatus last = basil::ItemStatus::kUnknown;  // what STATUS said last
};

// A forwarded call's answer: its bytes as ALPS (or the engine memory) gave
// them, and, when the request was a BASIL request other than INVENTORY, the
// answer decoded (once, here) for whoever learns from it.
struct Forwarded {
  std::string xml;
  std::optional<basil::Response> decoded;
};

// Why a SWITCH answer does not mean done: the first item whose status is
// not SUCCESS ("SWITCH of reservation 7 did not happen: FAILURE"); nullopt
// when every item switched.
std::optional<std::string> switch_not_done(const basil::Switched& answer);

class Client {
 public:
  // `transport`, `timings` and the observer must outlive the client.
  Client(boost::asio::any_io_executor executor, Transport& transport, ClientOptions options = {},
         Timings* timings = nullptr, CallObserver observer = {});

  // QUERY ENGINE at protocol 1.0, then the highest common dialect (or the
  // pinned one). Typed calls negotiate on first use when this was not called.
  Awaitable<basil::Result<NegotiatedEngine>> negotiate();
  // Forgets the dialect and negotiates again: call it after the transport
  // reconnected (ALPS may have been upgraded meanwhile). Also done on the
  // next call after ALPS answered "BASIL version mismatch".
  Awaitable<basil::Result<NegotiatedEngine>> renegotiate();
  std::optional<basil::Dialect> dialect() const { return dialect_; }
  const std::optional<basil::EngineInfo>& engine() const { return engine_; }

  Awaitable<basil::Result<basil::Inventory>> query_inventory(basil::InventoryQuery query = {});
  Awaitable<basil::Result<basil::Summary>> query_summary();
  Awaitable<basil::Result<basil::StatusInfo>> query_status(basil::StatusQuery query);
  // One RESERVE. The request must carry a batch_id (basild always knows the job).
  Awaitable<basil::Result<basil::Reserved>> reserve(basil::ReserveRequest request);
  // Adoption first: a full INVENTORY; a reservation that fits the request
  // (find_adoptable_reservation) is adopted, else one RESERVE is sent.
  Awaitable<basil::Result<ReserveOutcome>> reserve_or_adopt(basil::ReserveRequest request);
  Awaitable<basil::Result<basil::Confirmed>> confirm(basil::ConfirmRequest request);
  // CONFIRM of a reservation ALPS granted: a "cannot find resId" answer
  // (kReservationUnknown) may mean only that apsched has not taken the
  // reservation in yet (Torque met it: TRQ-3023), so it is sent again after
  // `waits` (one more attempt per wait); the last answer is returned.
  Awaitable<basil::Result<basil::Confirmed>> confirm_granted(basil::ConfirmRequest request,
                                                             std::vector<std::chrono::milliseconds> waits);
  // One RELEASE as ALPS answers it ("No entry for resId" is kReservationGone).
  Awaitable<basil::Result<basil::Released>> release_once(basil::ReleaseRequest request);
  // RELEASE until the reservation is proven gone: "No entry for resId", or
  // claims 0 (dialect 1.2 on). Outstanding claims and transient errors are
  // retried with the policy's backoff; a permanent error ends the loop; the
  // limit ends it with kTimeout.
  Awaitable<basil::Result<ReleaseOutcome>> release(basil::ReleaseRequest request);
  // One SWITCH. Done only when ALPS answered SUCCESS and every item's own
  // status is SUCCESS: an item that did not switch (FAILURE, INVALID, ...) is
  // kAlpsPermanent naming it, whatever ResponseData said.
  Awaitable<basil::Result<basil::Switched>> switch_state(basil::SwitchRequest request);
  // One reservation switched OUT (`out`) or IN, and confirmed: SWITCH, then
  // QUERY STATUS with the policy's backoff until STATUS shows it there
  // (core/switch_status.h). A SWITCH whose answer is lost (the transport's
  // error) or refused TRANSIENT (a switch under way) is settled by STATUS
  // and sent again while STATUS does not show it done. A PERMANENT refusal
  // (an EXCLUSIVE reservation, suspend/resume off) ends it after one STATUS,
  // unless that STATUS shows the reservation already where it was sent (an
  // ALPS may refuse a switch to where the reservation is: a SWITCH sent
  // again after a lost answer, or by a basild restarted mid-switch). The
  // limit ends it with kTimeout naming what STATUS said last.
  Awaitable<basil::Result<SwitchOutcome>> switch_confirmed(std::uint64_t reservation_id, bool out);
  // Request XML in, response XML out, untouched; `kind` is what the caller
  // made of the request (core/request_kind.h). Logged and timed as a
  // forwarded call of its method and query type (RAW when it is no BASIL
  // request), counted as an error when ALPS answers FAILURE; answered as
  // one when the engine memory answered it.
  // Only the transport's errors are errors; a BASIL FAILURE is a response.
  // A QUERY ENGINE that fails, or is answered with anything but an Engine,
  // is answered from the engine memory when it has an answer for the
  // request's protocol; one asked while that answer is fresh is answered
  // from it at once, logged with the transport "memory" and not timed (see
  // core/engine_memory.h).
  Awaitable<basil::Result<Forwarded>> forward(std::string request_xml, RequestKind kind);
  // forward() for a long answer passed on while it arrives (a scheduler's
  // INVENTORY): its bytes go to `on_chunk` as they come, then `on_end` is
  // told how the call ended (an error after some bytes: what was passed on
  // is no good answer), before the XML log's record is written, so that the
  // caller has its answer's end without waiting for the log. The result is
  // how many bytes, or that error. Timed as forward() is, its FAILURE told
  // by the answer's head; the XML log gets the whole answer, gathered only
  // while the log is on.
  Awaitable<basil::Result<std::uint64_t>> forward_stream(std::string request_xml, RequestKind kind,
                                                         Transport::ChunkHandler on_chunk,
                                                         std::function<void(const basil::Status&)> on_end);

  const ClientOptions& options() const { return options_; }
  Transport& transport() { return transport_; }

 private:
  template <typename Body>
  Awaitable<basil::Result<Body>> typed_call(CallKind kind, basil::Request request);
  Awaitable<basil::Result<basil::Response>> exchange(CallKind kind, const basil::Request& request);
  Awaitable<CallOutcome> transport_call(CallKind kind, std::string xml, std::uint64_t& call_id,
                                        Caller caller = Caller::kBasild);
  // The engine memory's part in a forwarded ENGINE's answer: learnt when
  // good, recalled when ALPS did not answer it well.
  std::optional<std::string> engine_after(const RequestKind& kind, const CallOutcome& outcome,
                                          const basil::Result<basil::Response>& decoded);
  // forward()'s answer once the transport has it.
  basil::Result<Forwarded> forwarded(const RequestKind& kind, CallOutcome outcome);
  // The observer's request (outcome null) or response event; `via` names
  // what answered when it was not the transport.
  void observe(CallEvent::Phase phase, std::uint64_t call_id, CallKind kind, Caller caller, std::string_view xml,
               const CallOutcome* outcome, std::string_view via = {}) const;
  std::optional<std::string> reuse_engine_answer(const RequestKind& kind, std::string_view request_xml);
  Awaitable<basil::Status> ensure_dialect();

  boost::asio::any_io_executor executor_;
  Transport& transport_;
  ClientOptions options_;
  Timings* timings_;
  CallObserver observer_;
  std::optional<basil::Dialect> dialect_;
  std::optional<basil::EngineInfo> engine_;
  std::uint64_t next_call_id_ = 1;
};

// Runs `op` on `executor` and hands its result to `done(basil::Result<T>)`.
// An exception out of `op` becomes kInternal; one out of `done` is swallowed.
template <typename T, typename Done>
void co_spawn_result(boost::asio::any_io_executor executor, Awaitable<basil::Result<T>> op,
                     Done done) {
  auto runner = [](Awaitable<basil::Result<T>> o, Done d) -> Awaitable<void> {
    std::optional<basil::Result<T>> r;
    try {
      r.emplace(co_await std::move(o));
    } catch (const std::exception& e) {
      r.emplace(basil::Status(basil::Code::kInternal, std::string("exception: ") + e.what()));
    } catch (...) {
      r.emplace(basil::Status(basil::Code::kInternal, "unknown exception"));
    }
    d(std::move(*r));
  };
  boost::asio::co_spawn(executor, runner(std::move(op), std::move(done)),
                        [](std::exception_ptr) noexcept {});
}

}  // namespace basild
