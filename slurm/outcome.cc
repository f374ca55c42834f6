#include "slurm/outcome.h"

#include "slurm/scontrol_job.h"
#include "slurm/text.h"

namespace basild::slurm {

using nlohmann::json;

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kOk: return "ok";
    case Verdict::kTransient: return "transient";
    case Verdict::kPermanent: return "permanent";
  }
  return "?";
}

namespace {

bool permanent_status(unsigned status) { return status == 400 || status == 409 || status == 413 || status == 502; }

}  // namespace

Outcome classify(const Reply& reply) {
  Outcome o;
  if (!reply.reached) {
    o.verdict = Verdict::kTransient;
    o.sentence = "basild did not answer: " + reply.message;
    return o;
  }
  o.body = json::parse(reply.body, nullptr, false);
  if (o.body.is_discarded()) o.body = nullptr;
  const bool object = o.body.is_object();
  const bool success = reply.status >= 200 && reply.status < 300;
  if (object && o.body.contains("code") && o.body["code"].is_string()) o.code = o.body["code"].get<std::string>();
  if (success && object) return o;
  if (object && o.body.contains("error") && o.body["error"].is_string()) {
    o.sentence = o.body["error"].get<std::string>();
  } else if (success) {
    o.sentence = "basild's answer (HTTP " + std::to_string(reply.status) + ") is not a JSON object";
  } else {
    o.sentence = "basild answered HTTP " + std::to_string(reply.status);
  }
  if (object && o.body.contains("transient") && o.body["transient"].is_boolean()) {
    o.verdict = o.body["transient"].get<bool>() ? Verdict::kTransient : Verdict::kPermanent;
  } else {
    o.verdict = !success && permanent_status(reply.status) ? Verdict::kPermanent : Verdict::kTransient;
  }
  return o;
}

std::optional<std::string> outage(const Reply& reply) {
  if (!reply.reached) return "basild, which did not answer: " + reply.message;
  const Outcome o = classify(reply);
  if (link_lost(o)) return "ALPS, which basild cannot reach: " + o.sentence;
  return std::nullopt;
}

bool link_lost(const Outcome& o) {
  return o.verdict == Verdict::kTransient && (o.code == "transport" || o.code == "timeout");
}

bool release_done(const Outcome& o) {
  if (!o.body.is_object() || !o.body.contains("state") || !o.body["state"].is_string()) return false;
  const auto state = o.body["state"].get<std::string>();
  if (o.verdict == Verdict::kOk) return state == "released" || state == "releasing";
  return state == "unknown";
}

std::string one_line(std::string_view text, std::size_t max) {
  std::string out;
  out.reserve(std::min(text.size(), max));
  for (char c : text) out += is_control(c) ? ' ' : c;
  if (out.size() > max) {
    std::size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
    out.resize(cut);
  }
  return out;
}

PrologEnd prolog_success(std::uint64_t reservation_id) {
  return {kExitOk, reservation_comment(reservation_id), false};
}

PrologEnd prolog_failure(Verdict verdict, std::string_view sentence) {
  if (verdict == Verdict::kPermanent) return {kExitPermanent, one_line("basil: refused: " + std::string(sentence)), true};
  return {kExitTransient, one_line("basil: could not start (transient): " + std::string(sentence)), false};
}

}  // namespace basild::slurm
