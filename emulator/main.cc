// basil-emulator: an apbasil drop-in emulating a Cray system's ALPS, plus the
// admin commands that change the emulated world. The executor around the pure
// core (core/handler.h) and the store (store/store.h).
#include <fcntl.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "basil_proto/codec.h"
#include "emulator/answer.h"
#include "emulator/apsched/clients.h"
#include "emulator/apsched/daemon.h"
#include "emulator/apsched/serial.h"
#include "emulator/apsched/socket.h"
#include "emulator/core/faults.h"
#include "emulator/core/handler.h"
#include "emulator/core/state.h"
#include "emulator/core/system.h"
#include "emulator/sdb_command.h"
#include "emulator/store/store.h"
#include "process/write_all.h"

namespace po = boost::program_options;
using basil::Result;
using basil::Status;
using emu::encode_or_internal;
using basil::process::write_all;

namespace {

constexpr const char* kUsage = R"(usage: basil-emulator [--state DIR]            (apbasil mode: request on stdin)
       basil-emulator init --preset NAME|--system FILE --state DIR [--cle VERSION]
                           [--inventory-forms on|off] [--fsync on|off] [--force]
       basil-emulator node --nids LIST [--set-state STATE] [--role ROLE]
                           [--accel-state UP|DOWN] [--sched]
       basil-emulator reserve --user NAME --width N [--depth N] [--nppn N] [--nppcu N]
                           [--memory MB] [--nodes LIST] [--mode EXCLUSIVE|SHARED]
                           [--batch-id ID | --interactive] [--pagg ID] [--account NAME]
       basil-emulator release --resid R
       basil-emulator app start --resid R [--cmd NAME] [--width N] [--uid N] [--gid N]
       basil-emulator app end --apid A
       basil-emulator apsched [--socket PATH] [--max-local-pes N]   (the ALPS daemon)
       basil-emulator aprun [-n PEs] [-N PEs_per_node] [-d depth] [-j CPUs_per_CU] command [args...]
       basil-emulator apkill [-SIGNAL] APID
       basil-emulator apstat [-r] [-a] [-v]
       basil-emulator fault [--method M] [--latency-ms X] [--latency-per-node-us X]
                           [--transient P] [--hang P] [--truncate P] [--garbage P]
                           [--exit P] [--exit-code N] [--stderr P] [--seed N]
                           [--cscs-model on|off] [--cscs-scale X] [--confirm-too-soon S] [--clear]
       basil-emulator system [--cle VERSION] [--inventory-forms on|off] [--fsync on|off]
                             [--apsched serial|parallel] [--switch on|off] [--switch-ms MS]
                             [--max-coresident N] [--switch-empty-early on|off]
       basil-emulator check | show
       basil-emulator sdb print|load|sync|forget|show [options]   (sdb --help)
       basil-emulator --version
Every command takes --state DIR (default: $BASIL_EMULATOR_STATE); apsched, aprun
and apkill take --socket PATH (default: $BASIL_APSCHED_SOCKET, else DIR/apsched.sock).
)";

std::uint64_t now_seconds() {
  if (const char* t = std::getenv("BASIL_EMULATOR_TIME"); t != nullptr && *t != '\0')
    return std::strtoull(t, nullptr, 10);
  return static_cast<std::uint64_t>(std::time(nullptr));
}

// Milliseconds since the epoch: a SWITCH's length (BASIL_EMULATOR_TIME: its
// second, whole).
std::uint64_t now_milliseconds() {
  if (const char* t = std::getenv("BASIL_EMULATOR_TIME"); t != nullptr && *t != '\0') return now_seconds() * 1000;
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

std::string state_dir_from(const po::variables_map& vm) {
  if (vm.count("state")) return vm["state"].as<std::string>();
  if (const char* e = std::getenv("BASIL_EMULATOR_STATE"); e != nullptr) return e;
  return {};
}

int fail(const std::string& what) {
  std::cerr << "basil-emulator: " << what << "\n";
  return 1;
}

bool on_off(const std::string& v, bool* out) {
  if (v == "on" || v == "true" || v == "yes" || v == "1") *out = true;
  else if (v == "off" || v == "false" || v == "no" || v == "0") *out = false;
  else return false;
  return true;
}

// ---------------------------------------------------------------- apbasil mode

std::string read_fd(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

int apbasil_mode(const std::string& state_dir) {
  std::string input = read_fd(0);
  // Failures that are not about the request still answer it in its protocol.
  auto request_failure = [&input](basil::ErrorClass cls, const std::string& text) {
    const auto envelope = basil::read_request_envelope(input);
    return basil::failure_for(envelope ? &*envelope : nullptr, cls, basil::ErrorSource::kSystem, text);
  };
  auto system_failure = [&](const std::string& text) {
    return encode_or_internal(request_failure(basil::ErrorClass::kPermanent, text));
  };
  if (state_dir.empty()) {
    write_all(1, system_failure("basil-emulator: no state directory (--state DIR or BASIL_EMULATOR_STATE)"));
    return 0;
  }
  auto store = emu::Store::open(state_dir);
  if (!store) {
    write_all(1, system_failure("basil-emulator: " + store.status().message()));
    return 0;
  }
  const auto decoded = basil::decode_request(input);
  const std::uint64_t now = now_seconds();
  const std::uint64_t now_ms = now_milliseconds();
  basil::Response response;
  emu::FaultPlan plan;
  std::uint64_t seq = 0;
  std::uint64_t fault_seed = 0;
  const bool nodes_only = decoded && (std::holds_alternative<basil::EngineQuery>(decoded->body) ||
                                      std::holds_alternative<basil::SummaryQuery>(decoded->body));
  // A query while no per-method fault is configured changes nothing, not
  // even the request sequence (which only seeds the per-method faults' dice):
  // it is answered from a read transaction, which writes and syncs nothing.
  // The CSCS latency model alone is deterministic and keeps this path, so
  // that with the model on a query costs the injected latency plus exactly
  // what it costs with the model off (the timing study checks that).
  const bool query = decoded && (nodes_only || std::holds_alternative<basil::InventoryQuery>(decoded->body) ||
                                 std::holds_alternative<basil::StatusQuery>(decoded->body));
  bool answered = false;
  Status st;
  // Serial apsched: one change at a time, with its latency (apsched/serial.h).
  std::optional<emu::apsched::SerialSection> serial;
  if (decoded && emu::apsched::serialised(*decoded)) {
    bool on = false;
    (void)(*store)->read([&](const emu::State& state) { on = state.system.apsched_serial; }, emu::Store::Scope::kNodes);
    if (on) serial.emplace(state_dir, emu::method_key(*decoded));
  }
  if (query) {
    st = (*store)->read([&](const emu::State& state) {
      if (!state.faults.methods.empty()) return;
      emu::Handled h = emu::handle(*decoded, state, now, now_ms);
      if (!h.delta.empty()) return;
      plan = emu::plan_faults(state.faults, emu::method_key(*decoded), state.node_count(), 0);
      response = std::move(h.response);
      answered = true;
    }, nodes_only ? emu::Store::Scope::kNodes : emu::Store::Scope::kAll);
  }
  if (!answered) st = (*store)->transact([&](const emu::State& state) -> Result<emu::Delta> {
    emu::Counters counters = state.counters;
    seq = ++counters.request_seq;
    fault_seed = state.faults.seed;
    const std::string key = decoded ? emu::method_key(*decoded) : std::string("*");
    plan = emu::plan_faults(state.faults, key, state.node_count(), seq);
    emu::Delta delta;
    if (plan.hang) {
      // never answers; nothing changes but the sequence number
    } else if (!decoded) {
      response = emu::decode_failure(state, decoded.status(), input);
    } else if (plan.transient) {
      const basil::Request& req = *decoded;
      auto d = basil::dialect_for(basil::cle_release(state.system.cle) ? basil::cle_release(state.system.cle)->engine_version
                                                                       : std::string("5.2.44"),
                                  req.protocol);
      response = basil::make_failure(d.value_or(req.dialect), req.protocol, req.method(),
                                     basil::ErrorClass::kTransient, basil::ErrorSource::kBackend,
                                     emu::kInjectedTransient);
    } else {
      emu::Handled h = emu::handle(*decoded, state, now, now_ms);
      response = std::move(h.response);
      delta = std::move(h.delta);
      if (delta.counters) counters = *delta.counters, counters.request_seq = seq;
    }
    delta.counters = counters;
    return delta;
  }, nodes_only ? emu::Store::Scope::kNodes : emu::Store::Scope::kAll);
  store->reset();
  // The emulated apsched stops or continues the processes a SWITCH concerns.
  if (st && decoded && std::holds_alternative<basil::SwitchRequest>(decoded->body) && response.ok())
    emu::apsched::follow_switch(state_dir);
  if (!st) {
    // The store failed (busy beyond the budget, corrupt): ALPS would answer a
    // TRANSIENT SYSTEM error.
    response = request_failure(basil::ErrorClass::kTransient, "basil-emulator: " + st.message());
    plan = emu::FaultPlan{};
  }
  if (plan.hang) {
    for (;;) ::pause();
  }
  if (plan.latency_ms > 0)
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<std::int64_t>(plan.latency_ms * 1000.0)));
  serial.reset();
  if (plan.stderr_noise) write_all(2, "apbasil: warning: emulator noise (injected fault, request " + std::to_string(seq) + ")\n");
  if (plan.garbage || plan.truncate) {
    std::string xml = encode_or_internal(response);
    if (plan.garbage) xml = emu::garbage_bytes(fault_seed, seq, std::max<std::size_t>(64, xml.size() / 2));
    else xml.resize(xml.size() / 2);
    write_all(1, xml);
  } else if (const Status w = emu::write_answer(1, response); !w && w.code() != basil::Code::kTransport) {
    // An INVENTORY cut by an encoding error after its first piece went out.
    write_all(2, "basil-emulator: the answer broke off: " + w.message() + "\n");
    ::_exit(1);
  }
  // The answer is out and the transaction committed: leave without tearing down
  // the model (a 2256-node INVENTORY is ~10^5 small objects).
  ::_exit(plan.exit_code);
}

// ---------------------------------------------------------------- admin

int run_txn(const std::string& dir, const emu::Store::TxnFn& fn) {
  auto store = emu::Store::open(dir);
  if (!store) return fail(store.status().message());
  Status st = (*store)->transact(fn);
  if (!st) return fail(st.message());
  return 0;
}

template <typename E>
bool parse_opt_enum(const po::variables_map& vm, const char* key, std::optional<E>* out, std::string* err) {
  if (!vm.count(key)) return true;
  auto v = basil::parse_known_enum<E>(vm[key].as<std::string>());
  if (!v) {
    *err = std::string("--") + key + ": unknown value '" + vm[key].as<std::string>() + "'";
    return false;
  }
  *out = v;
  return true;
}

int cmd_init(const po::variables_map& vm, const std::string& dir) {
  if (dir.empty()) return fail("init needs --state DIR");
  Result<emu::System> sys = Status(basil::Code::kInvalidValue, "init needs --preset NAME or --system FILE");
  if (vm.count("preset") && vm.count("system")) return fail("give either --preset or --system");
  if (vm.count("preset")) sys = emu::preset(vm["preset"].as<std::string>());
  if (vm.count("system")) {
    const std::string path = vm["system"].as<std::string>();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail("cannot read " + path + ": " + std::strerror(errno));
    const std::string text = read_fd(fd);
    ::close(fd);
    sys = emu::parse_system(text);
  }
  if (!sys) return fail(sys.status().message());
  if (vm.count("cle")) {
    const std::string cle = vm["cle"].as<std::string>();
    if (!basil::cle_release(cle)) return fail("unknown CLE release '" + cle + "'");
    sys->cle = cle;
  }
  if (vm.count("inventory-forms") && !on_off(vm["inventory-forms"].as<std::string>(), &sys->inventory_forms))
    return fail("--inventory-forms takes on or off");
  if (vm.count("fsync") && !on_off(vm["fsync"].as<std::string>(), &sys->fsync)) return fail("--fsync takes on or off");
  auto store = emu::Store::create(dir, emu::initial_state(*sys), vm.count("force") > 0);
  if (!store) return fail(store.status().message());
  return 0;
}

int cmd_node(const po::variables_map& vm, const std::string& dir) {
  if (!vm.count("nids")) return fail("node needs --nids LIST");
  auto nids = basil::NidList::parse(vm["nids"].as<std::string>());
  if (!nids) return fail("--nids: " + nids.status().message());
  emu::NodeChange change;
  std::string err;
  if (!parse_opt_enum(vm, "set-state", &change.state, &err) || !parse_opt_enum(vm, "role", &change.role, &err) ||
      !parse_opt_enum(vm, "accel-state", &change.accel_state, &err))
    return fail(err);
  if (!change.state && !change.role && !change.accel_state)
    return fail("node needs --set-state, --role or --accel-state");
  change.by_scheduler = vm.count("sched") > 0;
  const int rc = run_txn(dir, [&](const emu::State& s) { return emu::change_nodes(s, *nids, change); });
  return rc != 0 ? rc : emu::sdb_follow_node_change(dir);
}

int cmd_reserve(const po::variables_map& vm, const std::string& dir) {
  if (!vm.count("user") || !vm.count("width")) return fail("reserve needs --user and --width");
  basil::ReserveRequest req;
  req.user_name = vm["user"].as<std::string>();
  if (vm.count("interactive")) req.batch_id = "UNKNOWN";
  else req.batch_id = vm.count("batch-id") ? vm["batch-id"].as<std::string>() : std::string("orphan");
  if (vm.count("account")) req.account_name = vm["account"].as<std::string>();
  basil::ReserveParam p;
  p.width = vm["width"].as<std::uint64_t>();
  if (vm.count("depth")) p.depth = vm["depth"].as<std::uint32_t>();
  if (vm.count("nppn")) p.nppn = vm["nppn"].as<std::uint32_t>();
  if (vm.count("nppcu")) p.nppcu = vm["nppcu"].as<std::uint32_t>();
  if (vm.count("memory")) p.memory.push_back(basil::MemoryParam{basil::MemoryType::kOS, vm["memory"].as<std::uint64_t>()});
  if (vm.count("mode")) {
    auto m = basil::parse_known_enum<basil::ReservationMode>(vm["mode"].as<std::string>());
    if (!m) return fail("--mode takes EXCLUSIVE or SHARED");
    p.reservation_mode = *m;
  }
  if (vm.count("nodes")) {
    auto list = basil::NidList::parse(vm["nodes"].as<std::string>());
    if (!list) return fail("--nodes: " + list.status().message());
    p.nodes.push_back(*list);
  }
  req.params.push_back(p);
  const std::uint64_t pagg = vm.count("pagg") ? vm["pagg"].as<std::uint64_t>() : 0;
  std::uint64_t resid = 0;
  const int rc = run_txn(dir, [&](const emu::State& s) {
    return emu::create_reservation(s, req, pagg, now_seconds(), &resid);
  });
  if (rc == 0) std::cout << resid << "\n";
  return rc;
}

int cmd_release(const po::variables_map& vm, const std::string& dir) {
  if (!vm.count("resid")) return fail("release needs --resid R");
  const auto resid = vm["resid"].as<std::uint64_t>();
  return run_txn(dir, [&](const emu::State& s) { return emu::force_release(s, resid); });
}

int cmd_app(const po::variables_map& vm, const std::string& dir, const std::string& action) {
  if (action == "start") {
    if (!vm.count("resid")) return fail("app start needs --resid R");
    emu::AppStart a;
    a.reservation_id = vm["resid"].as<std::uint64_t>();
    if (vm.count("cmd")) a.cmd = vm["cmd"].as<std::string>();
    if (vm.count("width")) a.width = vm["width"].as<std::uint64_t>();
    if (vm.count("uid")) a.user_id = vm["uid"].as<std::uint32_t>();
    if (vm.count("gid")) a.group_id = vm["gid"].as<std::uint32_t>();
    std::uint64_t apid = 0;
    const int rc = run_txn(dir, [&](const emu::State& s) { return emu::start_application(s, a, now_seconds(), &apid); });
    if (rc == 0) std::cout << apid << "\n";
    return rc;
  }
  if (action == "end") {
    if (!vm.count("apid")) return fail("app end needs --apid A");
    const auto apid = vm["apid"].as<std::uint64_t>();
    return run_txn(dir, [&](const emu::State& s) { return emu::end_application(s, apid); });
  }
  return fail("app takes start or end");
}

int cmd_fault(const po::variables_map& vm, const std::string& dir) {
  return run_txn(dir, [&](const emu::State& s) -> Result<emu::Delta> {
    emu::FaultConfig f = s.faults;
    if (vm.count("clear")) f = emu::FaultConfig{};
    const std::string method = vm.count("method") ? vm["method"].as<std::string>() : "*";
    static const char* kMethods[] = {"*", "ENGINE", "INVENTORY", "SUMMARY", "STATUS", "RESERVE", "CONFIRM", "RELEASE", "SWITCH"};
    if (std::find(std::begin(kMethods), std::end(kMethods), method) == std::end(kMethods))
      return Status(basil::Code::kInvalidValue, "--method: unknown method '" + method + "'");
    auto rate = [&](const char* key, double* out) -> bool {
      if (!vm.count(key)) return true;
      const double v = vm[key].as<double>();
      if (!(v >= 0 && v <= 1)) return false;
      *out = v;
      return true;
    };
    const bool touches = vm.count("latency-ms") || vm.count("latency-per-node-us") || vm.count("transient") ||
                         vm.count("hang") || vm.count("truncate") || vm.count("garbage") || vm.count("exit") ||
                         vm.count("stderr");
    if (touches) {
      emu::MethodFaults& m = f.methods[method];
      if (vm.count("latency-ms")) m.latency_ms = std::max(0.0, vm["latency-ms"].as<double>());
      if (vm.count("latency-per-node-us")) m.latency_per_node_us = std::max(0.0, vm["latency-per-node-us"].as<double>());
      if (!rate("transient", &m.transient_rate) || !rate("hang", &m.hang_rate) || !rate("truncate", &m.truncate_rate) ||
          !rate("garbage", &m.garbage_rate) || !rate("exit", &m.exit_rate) || !rate("stderr", &m.stderr_rate))
        return Status(basil::Code::kInvalidValue, "fault rates are probabilities between 0 and 1");
      if (m == emu::MethodFaults{}) f.methods.erase(method);
    }
    if (vm.count("seed")) f.seed = vm["seed"].as<std::uint64_t>();
    if (vm.count("exit-code")) {
      const int c = vm["exit-code"].as<int>();
      if (c < 1 || c > 255) return Status(basil::Code::kInvalidValue, "--exit-code: 1 to 255");
      f.exit_code = c;
    }
    if (vm.count("cscs-model") && !on_off(vm["cscs-model"].as<std::string>(), &f.cscs_model))
      return Status(basil::Code::kInvalidValue, "--cscs-model takes on or off");
    if (vm.count("cscs-scale")) f.cscs_scale = std::max(0.0, vm["cscs-scale"].as<double>());
    if (vm.count("confirm-too-soon")) f.confirm_too_soon_s = std::min(vm["confirm-too-soon"].as<std::uint32_t>(), 3600u);
    emu::Delta d;
    d.faults = f;
    std::cout << emu::faults_to_json(f) << "\n";
    return d;
  });
}

int cmd_system(const po::variables_map& vm, const std::string& dir) {
  return run_txn(dir, [&](const emu::State& s) -> Result<emu::Delta> {
    emu::System sys = s.system;
    if (vm.count("cle")) {
      sys.cle = vm["cle"].as<std::string>();
      if (!basil::cle_release(sys.cle)) return Status(basil::Code::kInvalidValue, "unknown CLE release '" + sys.cle + "'");
    }
    if (vm.count("inventory-forms") && !on_off(vm["inventory-forms"].as<std::string>(), &sys.inventory_forms))
      return Status(basil::Code::kInvalidValue, "--inventory-forms takes on or off");
    if (vm.count("fsync") && !on_off(vm["fsync"].as<std::string>(), &sys.fsync))
      return Status(basil::Code::kInvalidValue, "--fsync takes on or off");
    if (vm.count("apsched")) {
      const std::string mode = vm["apsched"].as<std::string>();
      if (mode != "serial" && mode != "parallel")
        return Status(basil::Code::kInvalidValue, "--apsched takes serial or parallel");
      sys.apsched_serial = mode == "serial";
    }
    if (vm.count("switch") && !on_off(vm["switch"].as<std::string>(), &sys.switching.enabled))
      return Status(basil::Code::kInvalidValue, "--switch takes on or off");
    if (vm.count("switch-ms")) {
      if (vm["switch-ms"].as<std::uint32_t>() > 600000)
        return Status(basil::Code::kInvalidValue, "--switch-ms takes 0 to 600000");
      sys.switching.switch_ms = vm["switch-ms"].as<std::uint32_t>();
    }
    if (vm.count("max-coresident")) {
      const auto n = vm["max-coresident"].as<std::uint32_t>();
      if (n < 1 || n > 16) return Status(basil::Code::kInvalidValue, "--max-coresident takes 1 to 16");
      sys.switching.max_coresident = n;
    }
    if (vm.count("switch-empty-early") && !on_off(vm["switch-empty-early"].as<std::string>(), &sys.switching.empty_early))
      return Status(basil::Code::kInvalidValue, "--switch-empty-early takes on or off");
    emu::Delta d;
    d.system = sys;
    return d;
  });
}

int cmd_check(const std::string& dir) {
  auto store = emu::Store::open(dir);
  if (!store) return fail(store.status().message());
  auto problems = (*store)->check();
  if (!problems) return fail(problems.status().message());
  for (const auto& p : *problems) std::cout << p << "\n";
  if (!problems->empty()) return 2;
  std::cout << "ok\n";
  return 0;
}

int cmd_show(const std::string& dir) {
  auto store = emu::Store::open(dir);
  if (!store) return fail(store.status().message());
  auto s = (*store)->load();
  if (!s) return fail(s.status().message());
  const auto cle = basil::cle_release(s->system.cle);
  std::cout << "system " << s->system.mpp_host << ": CLE " << s->system.cle << " (engine "
            << (cle ? cle->engine_version : "?") << "), " << s->node_count() << " nodes, inventory forms "
            << (s->system.inventory_forms ? "on" : "off") << ", fsync " << (s->system.fsync ? "on" : "off")
            << ", apsched " << (s->system.apsched_serial ? "serial" : "parallel") << ", switch "
            << (s->system.switching.enabled ? "on" : "off") << " (" << s->system.switching.switch_ms
            << " ms, at most " << s->system.switching.max_coresident << " co-resident, empty early "
            << (s->system.switching.empty_early ? "on" : "off") << ")\n";
  std::cout << "changecount " << s->counters.changecount << " schedchangecount " << s->counters.schedchangecount
            << " next resId " << s->counters.next_reservation_id << " next apid "
            << s->counters.next_application_id << " requests " << s->counters.request_seq << "\n";
  for (const emu::NodeRange& r : s->nodes)
    std::cout << "nodes " << r.first << "-" << r.last << " " << s->system.layouts[r.layout].name << " "
              << basil::to_string(r.role) << " " << basil::to_string(r.state) << " " << basil::to_string(r.arch)
              << "\n";
  for (const auto& [id, r] : s->reservations) {
    const auto it = s->allocations.find(id);
    std::vector<std::uint32_t> nids;
    if (it != s->allocations.end())
      for (const auto& a : it->second) nids.push_back(a.nid);
    std::cout << "reservation " << id << " user " << r.user_name << " batch_id " << r.batch_id << " "
              << basil::to_string(r.mode) << (r.confirmed ? " confirmed pagg " + std::to_string(r.pagg_id) : "")
              << (r.released ? " released" : "") << (r.suspended ? " suspended" : "") << " claims "
              << s->claims(id) << " nodes " << basil::NidList::from_nids(nids).format() << "\n";
  }
  for (const auto& [id, a] : s->applications)
    if (a.time_stamp != 0)
      std::cout << "application " << id << " reservation " << a.reservation_id << " cmd "
                << (a.commands.empty() ? "" : a.commands[0].cmd) << "\n";
  std::cout << "faults " << emu::faults_to_json(s->faults) << "\n";
  return 0;
}

int admin(int argc, char** argv) {
  po::options_description opts("options");
  opts.add_options()
      ("help,h", "usage")
      ("version", "print the version")
      ("state", po::value<std::string>(), "state directory")
      ("preset", po::value<std::string>())
      ("system", po::value<std::string>())
      ("cle", po::value<std::string>())
      ("inventory-forms", po::value<std::string>())
      ("fsync", po::value<std::string>())
      ("apsched", po::value<std::string>())
      ("switch", po::value<std::string>())
      ("switch-ms", po::value<std::uint32_t>())
      ("max-coresident", po::value<std::uint32_t>())
      ("switch-empty-early", po::value<std::string>())
      ("force", "replace an existing state")
      ("nids", po::value<std::string>())
      ("set-state", po::value<std::string>())
      ("role", po::value<std::string>())
      ("accel-state", po::value<std::string>())
      ("sched", "count as the scheduler's change")
      ("user", po::value<std::string>())
      ("account", po::value<std::string>())
      ("width", po::value<std::uint64_t>())
      ("depth", po::value<std::uint32_t>())
      ("nppn", po::value<std::uint32_t>())
      ("nppcu", po::value<std::uint32_t>())
      ("memory", po::value<std::uint64_t>())
      ("nodes", po::value<std::string>())
      ("mode", po::value<std::string>())
      ("batch-id", po::value<std::string>())
      ("interactive", "batch_id UNKNOWN")
      ("pagg", po::value<std::uint64_t>())
      ("resid", po::value<std::uint64_t>())
      ("apid", po::value<std::uint64_t>())
      ("cmd", po::value<std::string>())
      ("uid", po::value<std::uint32_t>())
      ("gid", po::value<std::uint32_t>())
      ("method", po::value<std::string>())
      ("latency-ms", po::value<double>())
      ("latency-per-node-us", po::value<double>())
      ("transient", po::value<double>())
      ("hang", po::value<double>())
      ("truncate", po::value<double>())
      ("garbage", po::value<double>())
      ("exit", po::value<double>())
      ("exit-code", po::value<int>())
      ("stderr", po::value<double>())
      ("seed", po::value<std::uint64_t>())
      ("cscs-model", po::value<std::string>())
      ("cscs-scale", po::value<double>())
      ("confirm-too-soon", po::value<std::uint32_t>())
      ("clear", "clear every fault")
      ("command", po::value<std::vector<std::string>>(), "subcommand and its words");
  po::positional_options_description pos;
  pos.add("command", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "basil-emulator: " << e.what() << "\n" << kUsage;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << kUsage;
    return 0;
  }
  if (vm.count("version")) {
    std::cout << "basil-emulator " << BASIL_VERSION << "\n";
    return 0;
  }
  const std::string dir = state_dir_from(vm);
  std::vector<std::string> words;
  if (vm.count("command")) words = vm["command"].as<std::vector<std::string>>();
  if (words.empty()) return apbasil_mode(dir);
  const std::string& cmd = words[0];
  if (cmd != "init" && dir.empty()) return fail("no state directory (--state DIR or BASIL_EMULATOR_STATE)");
  if (cmd == "init") return cmd_init(vm, dir);
  if (cmd == "node") return cmd_node(vm, dir);
  if (cmd == "reserve") return cmd_reserve(vm, dir);
  if (cmd == "release") return cmd_release(vm, dir);
  if (cmd == "app") return cmd_app(vm, dir, words.size() > 1 ? words[1] : "");
  if (cmd == "fault") return cmd_fault(vm, dir);
  if (cmd == "system") return cmd_system(vm, dir);
  if (cmd == "check") return cmd_check(dir);
  if (cmd == "show") return cmd_show(dir);
  std::cerr << "basil-emulator: unknown command '" << cmd << "'\n" << kUsage;
  return 2;
}

// aprun, apkill, apstat and the apsched daemon (emulator/apsched/): their
// own argument shapes (aprun's command, apkill's -9), so no program_options.
int alps_program(const std::string& name, int argc, char** argv, int skip) {
  std::vector<std::string> words;
  const auto where = emu::apsched::take_where(words, argc, argv, 1, skip, name == "aprun");
  if (name == "aprun") return emu::apsched::aprun_main(words, where);
  if (name == "apkill") return emu::apsched::apkill_main(words, where);
  if (name == "apstat") return emu::apsched::apstat_main(words, where);
  if (!where.socket.empty()) words.insert(words.begin(), {"--socket", where.socket});
  return emu::apsched::apsched_main(words, where.state_dir);
}

}  // namespace

int main(int argc, char** argv) {
  std::string self = argc > 0 ? argv[0] : "basil-emulator";
  const auto slash = self.rfind('/');
  if (slash != std::string::npos) self = self.substr(slash + 1);
  if (self == "apkill" || self == "aprun" || self == "apstat") return alps_program(self, argc, argv, 0);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "apkill" || a == "aprun" || a == "apstat" || a == "apsched") return alps_program(a, argc, argv, i);
    if (a == "sdb") return emu::sdb_main(argc, argv, i);
    if (a == "--state" || a == "--socket") {
      ++i;
      continue;
    }
    if (a.rfind("--", 0) != 0) break;
  }
  return admin(argc, argv);
}
