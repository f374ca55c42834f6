#include "slurm/node_confirm.h"

#include "basil_proto/codec.h"
#include "basil_proto/model.h"
#include "slurm/text.h"

namespace basild::slurm {

using nlohmann::json;

std::string node_confirm_request(const NodeConfirm& q) {
  basil::ConfirmRequest c{.reservation_id = q.reservation_id, .pagg_id = q.pagg_id, .job_name = q.job_id};
  auto xml = basil::encode_request(basil::make_request(basil::Dialect::k1_0, std::move(c)));
  return xml ? *xml : std::string();
}

ApbasilOutcome classify_apbasil(const ProgramRun& r) {
  auto transient = [](std::string why) { return ApbasilOutcome{{Verdict::kTransient, std::move(why), {}, {}}, false}; };
  if (!r.started) return transient("apbasil did not start: " + r.error);
  if (r.timed_out) return transient("apbasil did not answer in time");
  auto response = basil::decode_response(r.out);
  if (!response) {
    const std::string err = one_line(r.err, 300);
    return transient("apbasil's answer is no BASIL response (exit status " + std::to_string(r.exit_code) +
                     (err.empty() ? "" : ", " + err) + "): " + response.status().message());
  }
  if (response->ok()) return {};
  const basil::Status s = response->error();
  ApbasilOutcome o;
  o.outcome = {s.transient() ? Verdict::kTransient : Verdict::kPermanent, "ALPS: " + s.message(), {}, {}};
  o.unknown = s.code() == basil::Code::kReservationUnknown;
  return o;
}

const std::vector<std::chrono::milliseconds>& confirm_retry_waits() {
  using std::chrono::milliseconds;
  static const std::vector<milliseconds> waits = {milliseconds(250), milliseconds(500), milliseconds(1000),
                                                  milliseconds(2000)};
  return waits;
}

namespace {

Outcome through_basild(const NodeConfirm& q, Ports& ports) {
  const json body = {{"reservation_id", q.reservation_id}, {"pagg_id", q.pagg_id}, {"batch_id", q.job_id}};
  const Reply reply = ports.basild("POST", "/v1/confirm", body.dump());
  Outcome o = classify(reply);
  // Not this job's reservation, or none basild holds: asking again cannot help.
  if (reply.reached && (reply.status == 403 || reply.status == 404)) o.verdict = Verdict::kPermanent;
  return o;
}

Outcome through_apbasil(const NodeConfirm& q, Ports& ports) {
  const std::string request = node_confirm_request(q);
  ApbasilOutcome o = classify_apbasil(ports.apbasil(*q.apbasil, request));
  for (const auto wait : confirm_retry_waits()) {
    if (!o.unknown) break;
    ports.pause(wait);
    o = classify_apbasil(ports.apbasil(*q.apbasil, request));
  }
  return o.outcome;
}

}  // namespace

int run_node_confirm(const NodeConfirm& q, Ports& ports) {
  const std::string id = std::to_string(q.reservation_id);
  const std::string via = q.apbasil ? *q.apbasil : "basild";
  const Outcome o = q.apbasil ? through_apbasil(q, ports) : through_basild(q, ports);
  const std::string prefix = "job " + q.job_id + " node-confirm: ";
  if (o.verdict == Verdict::kOk) {
    ports.log(LogLevel::kInfo, prefix + "reservation " + id + " confirmed with pagg_id " +
                                   std::to_string(q.pagg_id) + " through " + via);
    return kExitOk;
  }
  ports.log(LogLevel::kError, prefix + std::string(verdict_name(o.verdict)) + " failure: the CONFIRM of reservation " +
                                  id + " through " + via + " failed: " + o.sentence);
  return o.verdict == Verdict::kPermanent ? kExitPermanent : kExitTransient;
}

}  // namespace basild::slurm
