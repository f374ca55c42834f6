// What a strict client requires of every answer, on every engine the
// emulator offers and with every protocol a client uses there. Slurm's
// select/alps stops its controller on a missing attribute ("unspecified
// 'router_id' attribute"), on an attribute of an element its table gives none,
// and PBS refuses an attribute it does not know, so each element must carry
// exactly what its dialect has. The lists are written here from PROTOCOL.md
// (sections 2, 3, 3.8 and 5) and DECISIONS.md (section 2, SUMMARY), not taken
// from the codec's tables. The answers come from the emulator's own path (its
// handler on each preset's world, encoded as apbasil mode writes them) and
// are read with libxml2's reader, not with the codec's decoder.
#include <gtest/gtest.h>
#include <libxml/xmlreader.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "basil_proto/dialect.h"
#include "emulator/answer.h"
#include "emulator/core/handler.h"
#include "emulator/core/state.h"
#include "emulator/core/system.h"
#include "tests/emulator/core_support.h"

namespace emu {
namespace {

// The shape of an answer (PROTOCOL.md section 0): protocol 1.1 has two, the
// CLE 2.x "orig" and the CLE 3.x "plus".
enum class Shape { k10, k11, k11plus, k12, k13 };

// PROTOCOL.md section 6 and 5.6: the protocols an engine answers (1.0 up to
// 1.<highest>), whether its 1.1 is the "plus" form (engine 1.3.0, CLE 3.0,
// onwards) and whether its Engine carries basil_support (CLE 3.1 onwards).
struct EngineRow {
  std::string_view prefix;
  int highest;
  bool plus;
  bool basil_support;
};
constexpr EngineRow kEngines[] = {
    {"1.1.", 1, false, false}, {"1.2.", 1, false, false}, {"1.3.", 1, true, false}, {"3.1.", 1, true, true},
    {"4.", 2, true, true},     {"5.0.", 2, true, true},   {"5.1.", 3, true, true},  {"5.2.", 3, true, true},
};

std::optional<EngineRow> engine_row(const std::string& version) {
  for (const EngineRow& e : kEngines)
    if (version.rfind(e.prefix, 0) == 0) return e;
  return std::nullopt;
}

Shape shape_of(const EngineRow& e, int minor) {
  switch (minor) {
    case 0: return Shape::k10;
    case 1: return e.plus ? Shape::k11plus : Shape::k11;
    case 2: return Shape::k12;
    default: return Shape::k13;
  }
}

using Attrs = std::set<std::string>;

struct Answer {
  Shape shape = Shape::k13;
  bool basil_support = false;
  bool failure = false;
};

// The attributes of an element of an INVENTORY (PROTOCOL.md 3.1 to 3.7).
std::optional<Attrs> inventory_attrs(const std::vector<std::string>& path, Shape s) {
  const std::string& name = path.back();
  const bool plus = s != Shape::k10 && s != Shape::k11;
  if (name == "Inventory") return plus ? Attrs{"mpp_host", "timestamp"} : Attrs{};
  if (name == "NodeArray") {
    if (s == Shape::k13) return Attrs{"changecount", "schedchangecount"};
    return s == Shape::k12 ? Attrs{"changecount"} : Attrs{};
  }
  if (name == "Node") {
    Attrs a{"node_id", "name", "architecture", "role", "state"};
    if (s == Shape::k11plus || s == Shape::k12) a.insert("router_id");  // 3.2: every Node, engines 1.3.0-5.0
    return a;
  }
  if (name == "Socket") return Attrs{"ordinal", "architecture", "clock_mhz"};
  if (name == "Segment" || name == "ComputeUnit") return Attrs{"ordinal"};
  if (name == "Processor") return s == Shape::k13 ? Attrs{"ordinal"} : Attrs{"ordinal", "architecture", "clock_mhz"};
  if (name == "ProcessorAllocation" || name == "AcceleratorAllocation") return Attrs{"reservation_id"};
  if (name == "Memory") return Attrs{"type", "page_size_kb", "page_count"};
  if (name == "MemoryAllocation") return Attrs{"reservation_id", "page_count"};
  if (name == "Label") return Attrs{"name", "type", "disposition"};
  if (name == "Accelerator") return Attrs{"ordinal", "type", "state", "family", "memory_mb", "clock_mhz"};
  if (name == "Reservation") {
    Attrs a{"reservation_id", "user_name", "account_name"};
    if (s != Shape::k10) a.insert({"time_stamp", "batch_id"});
    if (plus) a.insert({"reservation_mode", "gpc_mode"});
    return a;
  }
  if (name == "Application") return Attrs{"application_id", "user_id", "group_id", "time_stamp"};
  if (name == "Command") return Attrs{"width", "depth", "nppn", "memory", "architecture", "cmd"};
  static const std::set<std::string> kArrays = {
      "NodeArray",  "SocketArray",      "SegmentArray",     "ComputeUnitArray", "ProcessorArray", "MemoryArray",
      "LabelArray", "AcceleratorArray", "ReservationArray", "ApplicationArray", "CommandArray"};
  if (kArrays.count(name)) return Attrs{};  // 3.8: an element without a handler carries none
  return std::nullopt;
}

// The attributes of a QUERY SUMMARY's elements (DECISIONS.md section 2).
std::optional<Attrs> summary_attrs(const std::vector<std::string>& path) {
  const std::string& name = path.back();
  const std::string& parent = path[path.size() - 2];
  if (name == "Summary") return Attrs{"mpp_host", "timestamp", "changecount", "schedchangecount"};
  if (name == "NodeSummary" || name == "AccelSummary") return Attrs{};
  const std::string what = parent == "NodeSummary" ? "role" : "type";
  const std::string second = parent == "NodeSummary" ? "architecture" : "family";
  if (name == "Up" || name == "Accelerator") return Attrs{what, second, "count"};
  if (name == "Down") return Attrs{what, second, "count", "state"};
  return std::nullopt;
}

// What a strict client accepts on `path`'s last element, or nullopt for an
// element it does not know there.
std::optional<Attrs> expected_attrs(const std::vector<std::string>& path, const Answer& a) {
  const std::string& name = path.back();
  const Shape s = a.shape;
  const bool plus = s != Shape::k10 && s != Shape::k11;
  if (name == "BasilResponse") return Attrs{"protocol"};
  if (name == "ResponseData")
    return a.failure ? Attrs{"status", "method", "error_class", "error_source"} : Attrs{"status", "method"};
  if (name == "Message") return Attrs{"severity"};
  if (path.size() >= 3 && path[2] == "Inventory") return inventory_attrs(path, s);
  if (path.size() >= 3 && path[2] == "Summary") return summary_attrs(path);
  // Section 5.6.
  if (name == "Engine") return a.basil_support ? Attrs{"name", "version", "basil_support"} : Attrs{"name", "version"};
  // Section 5.1: dummy cookies before 1.1 "plus", ReservedNodeArray from it.
  if (name == "Reserved")
    return plus ? Attrs{"reservation_id"} : Attrs{"reservation_id", "admin_cookie", "alloc_cookie"};
  if (name == "ReservedNodeArray") return Attrs{};
  if (name == "ReservedNode") return Attrs{"node_id"};
  // Sections 5.2 and 5.3: none at 1.0 and 1.1 "orig" (Slurm's tables give them no handler).
  if (name == "Confirmed") return plus ? Attrs{"reservation_id", "pagg_id"} : Attrs{};
  if (name == "Released") {
    if (s == Shape::k12 || s == Shape::k13) return Attrs{"reservation_id", "claims"};
    return plus ? Attrs{"reservation_id"} : Attrs{};
  }
  // Sections 5.4 and 5.5: STATUS and SWITCH items directly under ResponseData.
  if (name == "ReservationArray" || name == "ApplicationArray") return Attrs{};
  if (name == "Reservation") return Attrs{"reservation_id", "status"};
  if (name == "Application") return Attrs{"application_id", "status"};
  return std::nullopt;
}

// Every element of an answer, with its path from BasilResponse and its
// attribute names and values.
struct Element {
  std::vector<std::string> path;
  std::map<std::string, std::string> attrs;
};

std::vector<Element> elements_of(const std::string& xml) {
  std::vector<Element> out;
  std::unique_ptr<xmlTextReader, void (*)(xmlTextReaderPtr)> r(
      xmlReaderForMemory(xml.data(), static_cast<int>(xml.size()), nullptr, nullptr, 0), xmlFreeTextReader);
  std::vector<std::string> stack;
  int ret = 0;
  while (r && (ret = xmlTextReaderRead(r.get())) == 1) {
    if (xmlTextReaderNodeType(r.get()) != XML_READER_TYPE_ELEMENT) continue;
    const auto depth = static_cast<std::size_t>(xmlTextReaderDepth(r.get()));
    stack.resize(depth);
    stack.emplace_back(reinterpret_cast<const char*>(xmlTextReaderConstLocalName(r.get())));
    Element e{stack, {}};
    while (xmlTextReaderMoveToNextAttribute(r.get()) == 1)
      e.attrs[reinterpret_cast<const char*>(xmlTextReaderConstLocalName(r.get()))] =
          reinterpret_cast<const char*>(xmlTextReaderConstValue(r.get()));
    out.push_back(std::move(e));
  }
  EXPECT_EQ(ret, 0) << "not well-formed:\n" << xml.substr(0, 2000);
  return out;
}

std::string joined(const std::vector<std::string>& path) {
  std::string s;
  for (const auto& p : path) s += (s.empty() ? "" : "/") + p;
  return s;
}

// A preset's system cut to its first nodes (every node of a preset has the
// same layout), with a label on every layout so that Label elements appear.
State small_world(const std::string& preset_name, const std::string& cle) {
  auto sys = preset(preset_name);
  EXPECT_TRUE(sys.is_ok()) << sys.status().message();
  sys->cle = cle;
  sys->switching.switch_ms = 0;  // a SWITCH IN right after the OUT: the answers' shapes, not their timing
  for (Layout& l : sys->layouts)
    l.labels.push_back(basil::Label{"MOAB:FEATURE=regmem", basil::LabelType::kSoft, basil::LabelDisposition::kAttract});
  std::vector<NodeRange> kept;
  std::uint64_t left = 6;
  for (NodeRange r : sys->nodes) {
    if (left == 0) break;
    if (r.size() > left) r.last = static_cast<std::uint32_t>(r.first + left - 1);
    left -= r.size();
    kept.push_back(r);
  }
  sys->nodes = kept;
  return initial_state(*sys);
}

class StrictClient {
 public:
  StrictClient(State& state, std::string protocol, Answer answer)
      : state_(state), protocol_(std::move(protocol)), answer_(answer) {}

  // Runs a request as apbasil mode does (handler, delta applied, answer
  // encoded) and checks every element of the answer; returns the names seen.
  std::multiset<std::string> ask(basil::RequestBody body, bool expect_failure = false) {
    Handled h = handle(request(protocol_.c_str(), std::move(body)), state_, 1000);
    apply(state_, h.delta);
    const std::string xml = encode_or_internal(h.response);
    Answer a = answer_;
    a.failure = expect_failure;
    std::multiset<std::string> seen;
    for (const Element& e : elements_of(xml)) {
      seen.insert(e.path.back());
      const auto want = expected_attrs(e.path, a);
      if (!want) {
        ADD_FAILURE() << joined(e.path) << " is not an element a strict client knows here\n" << xml.substr(0, 3000);
        continue;
      }
      Attrs got;
      for (const auto& [k, v] : e.attrs) got.insert(k);
      EXPECT_EQ(got, *want) << joined(e.path) << " (have, want)\n" << xml.substr(0, 3000);
      if (e.path.back() == "BasilResponse") {
        EXPECT_EQ(e.attrs.at("protocol"), protocol_);
      } else if (e.path.back() == "ResponseData") {
        EXPECT_EQ(e.attrs.at("status"), expect_failure ? "FAILURE" : "SUCCESS");
      } else if (e.attrs.count("router_id")) {
        EXPECT_GT(std::stoul(e.attrs.at("router_id")), 0u) << "PROTOCOL.md 3.2";
      }
    }
    return seen;
  }

 private:
  State& state_;
  std::string protocol_;
  Answer answer_;
};

basil::ReserveRequest two_nodes(const State& s, Shape shape) {
  basil::ReserveRequest r;
  r.user_name = "alice";
  r.batch_id = "42";
  basil::ReserveParam p;
  p.width = 2;
  p.nppn = 1;
  if (s.system.layouts[0].accel && (shape == Shape::k12 || shape == Shape::k13)) p.accelerators.push_back({});
  // SWITCH (1.2 onwards) takes SHARED reservations alone.
  if (shape == Shape::k12 || shape == Shape::k13) p.reservation_mode = basil::ReservationMode::kShared;
  r.params.push_back(p);
  return r;
}

// Every answer a client of this engine gets at this protocol.
void check_every_answer(const std::string& preset_name, const std::string& cle, int minor) {
  State s = small_world(preset_name, cle);
  const std::string protocol = "1." + std::to_string(minor);
  // As a client learns it: QUERY ENGINE at protocol 1.0.
  auto engine = handle(request("1.0", basil::EngineQuery{}), s, 1000);
  ASSERT_TRUE(engine.response.ok());
  const auto row = engine_row(std::get<basil::EngineInfo>(engine.response.body).version);
  ASSERT_TRUE(row) << "an engine PROTOCOL.md does not list";
  if (minor > row->highest) return;
  const Shape shape = shape_of(*row, minor);
  StrictClient client(s, protocol, Answer{shape, row->basil_support, false});
  EXPECT_EQ(client.ask(basil::EngineQuery{}).count("Engine"), 1u);
  const auto reserved = client.ask(two_nodes(s, shape));
  EXPECT_EQ(reserved.count("Reserved"), 1u);
  EXPECT_EQ(reserved.count("ReservedNode"), shape == Shape::k10 || shape == Shape::k11 ? 0u : 2u);
  EXPECT_EQ(client.ask(basil::ConfirmRequest{1, 77, {}}).count("Confirmed"), 1u);
  auto app = start_application(s, AppStart{1, 1000, 1000, "a.out", {}}, 1100);
  ASSERT_TRUE(app.is_ok()) << app.status().message();
  apply(s, *app);
  const auto inv = client.ask(basil::InventoryQuery{});
  for (const char* name : {"Node", "Processor", "ProcessorAllocation", "Memory", "MemoryAllocation", "Label"})
    EXPECT_GT(inv.count(name), 0u) << name;
  if (shape != Shape::k10) {
    EXPECT_EQ(inv.count("Command"), 2u) << "the BASIL placeholder and the aprun";
  }
  if (s.system.layouts[0].accel && (shape == Shape::k12 || shape == Shape::k13)) {
    EXPECT_GT(inv.count("AcceleratorAllocation"), 0u);
  }
  if (shape == Shape::k12 || shape == Shape::k13) {
    basil::StatusQuery q;
    q.reservation_ids = {1};
    EXPECT_EQ(client.ask(q).count("Reservation"), 1u);
    basil::SwitchRequest out;
    out.reservations.push_back({1, basil::SwitchAction::kOut});
    EXPECT_EQ(client.ask(out).count("Reservation"), 1u);
    basil::SwitchRequest in;
    in.reservations.push_back({1, basil::SwitchAction::kIn});
    EXPECT_EQ(client.ask(in).count("Reservation"), 1u);
  }
  if (shape == Shape::k13) {
    EXPECT_EQ(client.ask(basil::SummaryQuery{}).count("Summary"), 1u);
  }
  EXPECT_EQ(client.ask(basil::ReleaseRequest{1, {}}).count("Released"), 1u);
  EXPECT_EQ(client.ask(basil::ConfirmRequest{99, 1, {}}, true).count("Message"), 1u);
}

TEST(StrictClientTest, EveryAnswerOfEveryOfferedEngineCarriesWhatAStrictClientRequires) {
  const auto cles = basil::cle_release_names();
  ASSERT_GE(cles.size(), 11u);
  for (const std::string& name : preset_names())
    for (const std::string& cle : cles)
      for (int minor = 0; minor <= 3; ++minor) {
        SCOPED_TRACE(name + " CLE " + cle + " protocol 1." + std::to_string(minor));
        check_every_answer(name, cle, minor);
      }
}

}  // namespace
}  // namespace emu
