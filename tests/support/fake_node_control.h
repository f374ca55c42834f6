// An in-memory Slurm behind the node-control port, for unit tests without
// processes: its nodes (name, base state, flags, reason) as the test sets
// them, drain and resume as scontrol does them, every call recorded, and
// failures on demand. Completion handlers run on the io_context, never
// inside the call.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "basild/asio/asio.h"
#include "basild/core/node_control_port.h"

namespace basild::testing {

class FakeNodeControl final : public NodeControlPort {
 public:
  explicit FakeNodeControl(boost::asio::io_context& io) : io_(io) {}

  // A node Slurm knows, in base state `base` ("IDLE", "DOWN", ...).
  void add(const std::string& name, const std::string& base = "IDLE", bool drain = false,
           const std::string& reason = "") {
    SlurmNode n;
    n.name = name;
    n.down = base == "DOWN";
    n.drain = drain;
    n.reason = reason;
    nodes.push_back(n);
    bases.push_back(base);
    restate(nodes.size() - 1);
  }
  // The node as Slurm has it now (an empty record when Slurm has none).
  SlurmNode node(const std::string& name) const {
    for (const auto& n : nodes)
      if (n.name == name) return n;
    return {};
  }
  // What an admin does: drain with their own reason.
  void admin_drain(const std::string& name, const std::string& reason) {
    set(name, true, reason);
  }

  void list(std::optional<std::string> name, ListDone done) override {
    calls.push_back(name ? "list " + *name : "list");
    if (name && before_list_one) before_list_one(*name);
    basil::Result<std::vector<SlurmNode>> r = std::vector<SlurmNode>{};
    if (fail_lists > 0) {
      --fail_lists;
      r = basil::Status(basil::Code::kTransport, "scontrol exit status 1 (slurm_load_node error: Unable to contact "
                                                 "slurm controller (connect failure))");
    } else {
      for (const auto& n : nodes)
        if (!name || n.name == *name) r->push_back(n);
    }
    post(std::move(done), std::move(r));
  }

  void drain(const std::string& name, const std::string& reason, Done done) override {
    calls.push_back("drain " + name + " " + reason);
    post(std::move(done), change(name, true, reason));
  }

  void resume(const std::string& name, Done done) override {
    calls.push_back("resume " + name);
    post(std::move(done), change(name, false, ""));
  }

  // The calls of one kind ("drain", "resume", "list"), in order.
  std::vector<std::string> of(const std::string& kind) const {
    std::vector<std::string> out;
    for (const auto& c : calls)
      if (c.rfind(kind, 0) == 0) out.push_back(c);
    return out;
  }

  std::vector<SlurmNode> nodes;
  std::vector<std::string> bases;
  std::vector<std::string> calls;
  int fail_lists = 0;    // the next lists that fail
  int fail_changes = 0;  // the next drains or resumes that fail
  std::function<void(const std::string& name)> before_list_one;

 private:
  template <typename Done, typename R>
  void post(Done done, R r) {
    boost::asio::post(io_, [done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
  }

  basil::Status change(const std::string& name, bool drain, const std::string& reason) {
    if (fail_changes > 0) {
      --fail_changes;
      return basil::Status(basil::Code::kTransport, "scontrol exit status 1 (slurm_update error: Unable to contact "
                                                    "slurm controller)");
    }
    if (node(name).name.empty())
      return basil::Status(basil::Code::kTransport, "scontrol exit status 1 (Invalid node name specified)");
    set(name, drain, reason);
    return basil::Status::ok();
  }

  void set(const std::string& name, bool drain, const std::string& reason) {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].name != name) continue;
      nodes[i].drain = drain;
      nodes[i].reason = reason;
      if (!drain) {
        nodes[i].fail = false;
        if (nodes[i].down) bases[i] = "IDLE";
        nodes[i].down = false;
      }
      restate(i);
    }
  }

  void restate(std::size_t i) {
    nodes[i].state = bases[i] + (nodes[i].drain ? "+DRAIN" : "");
  }

  boost::asio::io_context& io_;
};

}  // namespace basild::testing
