#include "emulator/apsched/wire.h"

#include <nlohmann/json.hpp>

namespace emu::apsched {

using basil::Code;
using basil::Result;
using basil::Status;
using nlohmann::json;

namespace {

constexpr std::pair<ReplyKind, const char*> kReplyNames[] = {{ReplyKind::kStarted, "started"},
                                                             {ReplyKind::kDone, "done"},
                                                             {ReplyKind::kRefused, "refused"},
                                                             {ReplyKind::kOk, "ok"},
                                                             {ReplyKind::kUnknown, "unknown"}};

std::string line_of(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; }

Result<json> parse(std::string_view line) {
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status(Code::kInvalidValue, "not a JSON object");
  return j;
}

// The value of `key` as T, or kInvalidValue naming it.
template <typename T>
Result<T> field(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) return Status(Code::kInvalidValue, std::string("no \"") + key + "\"");
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return Status(Code::kInvalidValue, std::string("\"") + key + "\" has the wrong type");
  }
}

Result<Request> decode_run(const json& j) {
  RunRequest r;
  auto resid = field<std::uint64_t>(j, "resid");
  auto n = field<std::uint64_t>(j, "n");
  auto nppn = field<std::uint32_t>(j, "N");
  auto d = field<std::uint32_t>(j, "d");
  auto cpus = field<std::uint32_t>(j, "j");
  auto argv = field<std::vector<std::string>>(j, "argv");
  auto cwd = field<std::string>(j, "cwd");
  auto env = field<std::vector<std::string>>(j, "env");
  for (const Status* s : {&resid.status(), &n.status(), &nppn.status(), &d.status(), &cpus.status(), &argv.status(),
                          &cwd.status(), &env.status()})
    if (!*s) return *s;
  if (argv->empty()) return Status(Code::kInvalidValue, "\"argv\" is empty");
  r.reservation_id = *resid;
  r.shape = Shape{*n, *nppn, *d, *cpus};
  r.argv = std::move(*argv);
  r.cwd = std::move(*cwd);
  r.env = std::move(*env);
  return Request{std::move(r)};
}

}  // namespace

std::string encode(const Request& request) {
  if (std::holds_alternative<SyncRequest>(request)) return line_of({{"op", "sync"}});
  if (const auto* k = std::get_if<KillRequest>(&request))
    return line_of({{"op", "kill"}, {"apid", k->application_id}, {"signal", k->signal}});
  const auto& r = std::get<RunRequest>(request);
  return line_of({{"op", "run"},
                  {"resid", r.reservation_id},
                  {"n", r.shape.width},
                  {"N", r.shape.nppn},
                  {"d", r.shape.depth},
                  {"j", r.shape.cpus_per_cu},
                  {"argv", r.argv},
                  {"cwd", r.cwd},
                  {"env", r.env}});
}

std::string encode(const Reply& reply) {
  json j;
  for (auto [kind, name] : kReplyNames)
    if (kind == reply.kind) j["reply"] = name;
  if (reply.kind == ReplyKind::kStarted) j["apid"] = reply.application_id;
  if (reply.kind == ReplyKind::kDone) j["status"] = reply.status;
  if (reply.kind == ReplyKind::kDone || reply.kind == ReplyKind::kRefused) j["text"] = reply.text;
  return line_of(j);
}

Result<Request> decode_request(std::string_view line) {
  auto j = parse(line);
  if (!j) return j.status();
  auto op = field<std::string>(*j, "op");
  if (!op) return op.status();
  if (*op == "run") return decode_run(*j);
  if (*op == "sync") return Request{SyncRequest{}};
  if (*op != "kill") return Status(Code::kInvalidValue, "unknown op \"" + *op + "\"");
  auto apid = field<std::uint64_t>(*j, "apid");
  auto sig = field<int>(*j, "signal");
  if (!apid) return apid.status();
  if (!sig) return sig.status();
  return Request{KillRequest{*apid, *sig}};
}

Result<Reply> decode_reply(std::string_view line) {
  auto j = parse(line);
  if (!j) return j.status();
  auto name = field<std::string>(*j, "reply");
  if (!name) return name.status();
  Reply r;
  bool known = false;
  for (auto [kind, n] : kReplyNames)
    if (*name == n) r.kind = kind, known = true;
  if (!known) return Status(Code::kInvalidValue, "unknown reply \"" + *name + "\"");
  if (r.kind == ReplyKind::kStarted) {
    auto apid = field<std::uint64_t>(*j, "apid");
    if (!apid) return apid.status();
    r.application_id = *apid;
  }
  if (r.kind == ReplyKind::kDone) {
    auto status = field<int>(*j, "status");
    if (!status) return status.status();
    r.status = *status;
  }
  if (r.kind == ReplyKind::kDone || r.kind == ReplyKind::kRefused) {
    auto text = field<std::string>(*j, "text");
    if (!text) return text.status();
    r.text = std::move(*text);
  }
  return r;
}

}  // namespace emu::apsched
