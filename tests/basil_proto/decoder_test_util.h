// Helpers of the decoder tests: feeding a decoder in chunks, a full textual
// dump of a decoded model (to compare two decodings of the same bytes), and
// a generator of large 1.3 INVENTORY documents.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "basil_proto/codec.h"
#include "basil_proto/model.h"

namespace basil::testing {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Feeds `xml` in chunks of `chunk` bytes (the last one shorter).
inline Result<Decoded> decode_in_chunks(std::string_view xml, std::size_t chunk,
                                        const DecodeOptions& options = {}) {
  Decoder d(options);
  for (std::size_t at = 0; at < xml.size(); at += chunk) {
    Status s = d.feed(xml.substr(at, chunk));
    if (!s) return s;
  }
  return d.finish();
}

// ---------------------------------------------------------------- dump

// A cheap text sink (the chunking tests dump the model thousands of times).
class Sink {
 public:
  Sink& operator<<(std::string_view s) {
    out_.append(s);
    return *this;
  }
  Sink& operator<<(const std::string& s) { return *this << std::string_view(s); }
  Sink& operator<<(const char* s) { return *this << std::string_view(s); }
  Sink& operator<<(char c) {
    out_ += c;
    return *this;
  }
  Sink& operator<<(bool b) { return *this << (b ? '1' : '0'); }
  template <typename T>
  requires std::is_integral_v<T> Sink& operator<<(T v) {
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    (void)ec;
    out_.append(buf, end);
    return *this;
  }
  std::string str() && { return std::move(out_); }

 private:
  std::string out_;
};

inline void dump_procs(Sink& o, const std::vector<Processor>& ps) {
  for (const Processor& p : ps) {
    o << " P" << p.ordinal << ':' << to_string(p.architecture) << ':' << p.clock_mhz;
    for (auto a : p.allocations) o << "+r" << a;
  }
}

inline void dump_mem(Sink& o, const std::vector<Memory>& ms) {
  for (const Memory& m : ms) {
    o << " M" << to_string(m.type) << ':' << m.page_size_kb << 'x' << m.page_count;
    for (const auto& a : m.allocations) o << "+r" << a.reservation_id << '/' << a.page_count;
  }
}

inline void dump_labels(Sink& o, const std::vector<Label>& ls) {
  for (const Label& l : ls) {
    o << " L" << l.name << ':' << to_string(l.type) << ':' << to_string(l.disposition);
  }
}

inline void dump_segment(Sink& o, const Segment& s) {
  o << " S" << s.ordinal << '[';
  for (const ComputeUnit& c : s.compute_units) {
    o << " CU" << c.ordinal << '[';
    dump_procs(o, c.processors);
    o << ']';
  }
  dump_procs(o, s.processors);
  dump_mem(o, s.memory);
  dump_labels(o, s.labels);
  o << ']';
}

template <typename T>
std::string opt(const std::optional<T>& v) {
  if (!v) return "-";
  Sink s;
  if constexpr (std::is_enum_v<T>) {
    s << to_string(*v);
  } else {
    s << *v;
  }
  return std::move(s).str();
}

inline std::string dump(const Response& r) {
  Sink o;
  o << "protocol=" << r.protocol << " dialect=" << dialect_id(r.dialect)
    << " status=" << to_string(r.status) << " method=" << to_string(r.method)
    << " type=" << opt(r.type) << " class=" << opt(r.error_class)
    << " source=" << opt(r.error_source) << '\n';
  for (const Message& m : r.messages)
    o << "message " << to_string(m.severity) << ' ' << m.text << '\n';
  if (const auto* inv = std::get_if<Inventory>(&r.body)) {
    o << "inventory host=" << opt(inv->mpp_host) << " ts=" << opt(inv->timestamp)
      << " cpcu=" << opt(inv->cpcu) << " nodes?" << inv->has_node_array
      << " cc=" << opt(inv->changecount) << " scc=" << opt(inv->schedchangecount) << " resv?"
      << inv->has_reservation_array << '\n';
    for (const Node& n : inv->nodes) {
      o << "node " << n.node_id << ' ' << n.name << ' ' << to_string(n.architecture) << ' '
        << to_string(n.role) << ' ' << to_string(n.state) << " router=" << opt(n.router_id);
      dump_procs(o, n.processors);
      dump_mem(o, n.memory);
      dump_labels(o, n.labels);
      for (const Segment& s : n.segments) dump_segment(o, s);
      for (const Socket& s : n.sockets) {
        o << " K" << s.ordinal << ':' << to_string(s.architecture) << ':' << s.clock_mhz << '[';
        for (const Segment& g : s.segments) dump_segment(o, g);
        o << ']';
      }
      for (const Accelerator& a : n.accelerators) {
        o << " A" << a.ordinal << ':' << a.type << ':' << to_string(a.state) << ':' << a.family
          << ':' << a.memory_mb << ':' << a.clock_mhz;
        for (auto x : a.allocations) o << "+r" << x;
      }
      o << '\n';
    }
    for (const Reservation& v : inv->reservations) {
      o << "reservation " << v.reservation_id << ' ' << v.user_name << ' ' << v.account_name << ' '
        << opt(v.time_stamp) << ' ' << opt(v.batch_id) << ' ' << opt(v.reservation_mode) << ' '
        << opt(v.gpc_mode);
      for (const Application& a : v.applications) {
        o << " app " << a.application_id << ' ' << a.user_id << ' ' << a.group_id << ' '
          << a.time_stamp;
        for (const Command& c : a.commands) {
          o << " cmd " << c.width << ' ' << c.depth << ' ' << c.nppn << ' ' << c.memory << ' '
            << c.architecture << ' ' << c.cmd;
        }
      }
      o << '\n';
    }
  } else if (const auto* s = std::get_if<Summary>(&r.body)) {
    o << "summary " << opt(s->mpp_host) << ' ' << opt(s->timestamp) << ' ' << s->changecount << ' '
      << s->schedchangecount << " accel?" << s->has_accel_summary << '\n';
    for (const auto& e : s->nodes) {
      o << (e.up ? "up " : "down ") << to_string(e.role) << ' ' << to_string(e.architecture) << ' '
        << to_string(e.state) << ' ' << e.count << ' ' << e.nids.format() << '\n';
    }
    for (const auto& t : s->accel_totals)
      o << "accel " << t.type << ' ' << t.family << ' ' << t.count << '\n';
    for (const auto& e : s->accels) {
      o << (e.up ? "aup " : "adown ") << e.type << ' ' << e.family << ' ' << to_string(e.state)
        << ' ' << e.count << ' ' << e.nids.format() << '\n';
    }
  } else if (const auto* e = std::get_if<EngineInfo>(&r.body)) {
    o << "engine " << e->name << ' ' << e->version;
    for (const auto& b : e->basil_support) o << ' ' << b;
    o << '\n';
  } else if (const auto* v = std::get_if<Reserved>(&r.body)) {
    o << "reserved " << v->reservation_id << ' ' << opt(v->admin_cookie) << ' '
      << opt(v->alloc_cookie) << " nodes?" << v->has_reserved_nodes;
    for (auto n : v->reserved_nodes) o << ' ' << n;
    o << '\n';
  } else if (const auto* c = std::get_if<Confirmed>(&r.body)) {
    o << "confirmed " << opt(c->reservation_id) << ' ' << opt(c->pagg_id) << '\n';
  } else if (const auto* l = std::get_if<Released>(&r.body)) {
    o << "released " << opt(l->reservation_id) << ' ' << opt(l->claims) << '\n';
  } else if (const auto* st = std::get_if<StatusInfo>(&r.body)) {
    for (const auto& i : st->reservations)
      o << "status r" << i.id << ' ' << to_string(i.status) << '\n';
    for (const auto& i : st->applications)
      o << "status a" << i.id << ' ' << to_string(i.status) << '\n';
  } else if (const auto* sw = std::get_if<Switched>(&r.body)) {
    for (const auto& i : sw->reservations)
      o << "switched r" << i.id << ' ' << to_string(i.status) << '\n';
    for (const auto& i : sw->applications)
      o << "switched a" << i.id << ' ' << to_string(i.status) << '\n';
  }
  return std::move(o).str();
}

// ---------------------------------------------------------------- generator

// A 1.3 INVENTORY of `nodes` XC30-style nodes (2 sockets x 8 compute units x
// 2 threads, 32 GiB per socket) and `reservations` reservations that each
// hold the processors of one node. Written in apbasil's format.
inline std::string make_inventory_1_3(std::size_t nodes, std::size_t reservations) {
  std::string x;
  x.reserve(nodes * 3300 + reservations * 600 + 512);
  x += "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"1.3\">\n";
  x += " <ResponseData status=\"SUCCESS\" method=\"QUERY\">\n";
  x += "  <Inventory mpp_host=\"xc30\" timestamp=\"1380000000\">\n";
  x += "   <NodeArray changecount=\"14\" schedchangecount=\"9\">\n";
  for (std::size_t n = 0; n < nodes; ++n) {
    const std::size_t nid = 24 + n;
    const bool held = n < reservations;
    x += "    <Node node_id=\"" + std::to_string(nid) + "\" name=\"c" + std::to_string(n / 192) +
         "-0c" + std::to_string((n / 64) % 3) + "s" + std::to_string((n / 4) % 16) + "n" +
         std::to_string(n % 4) + "\" architecture=\"XT\" role=\"BATCH\" state=\"" +
         (n % 97 == 5 ? "DOWN" : "UP") + "\">\n";
    x += "     <SocketArray>\n";
    for (int s = 0; s < 2; ++s) {
      x += "      <Socket ordinal=\"" + std::to_string(s) +
           "\" architecture=\"x86_64\" clock_mhz=\"2600\">\n";
      x += "       <SegmentArray>\n        <Segment ordinal=\"0\">\n         <ComputeUnitArray>\n";
      for (int c = 0; c < 8; ++c) {
        x += "          <ComputeUnit ordinal=\"" + std::to_string(c) + "\">\n";
        x += "           <ProcessorArray>\n";
        for (int p = 0; p < 2; ++p) {
          if (held) {
            x += "            <Processor ordinal=\"" + std::to_string(p) + "\">\n";
            x += "             <ProcessorAllocation reservation_id=\"" + std::to_string(n + 1) +
                 "\"/>\n            </Processor>\n";
          } else {
            x += "            <Processor ordinal=\"" + std::to_string(p) + "\"/>\n";
          }
        }
        x += "           </ProcessorArray>\n          </ComputeUnit>\n";
      }
      x += "         </ComputeUnitArray>\n         <MemoryArray>\n";
      x += "          <Memory type=\"OS\" page_size_kb=\"4\" page_count=\"8388608\"/>\n";
      x += "         </MemoryArray>\n         <LabelArray/>\n";
      x += "        </Segment>\n       </SegmentArray>\n      </Socket>\n";
    }
    x += "     </SocketArray>\n    </Node>\n";
  }
  x += "   </NodeArray>\n   <ReservationArray>\n";
  for (std::size_t r = 0; r < reservations; ++r) {
    const std::string id = std::to_string(r + 1);
    x += "    <Reservation reservation_id=\"" + id + "\" user_name=\"user" + id +
         "\" account_name=\"DEFAULT\" time_stamp=\"1380000001\" batch_id=\"" +
         std::to_string(149000 + r) + "\" reservation_mode=\"EXCLUSIVE\" gpc_mode=\"NONE\">\n";
    x += "     <ApplicationArray>\n      <Application application_id=\"" +
         std::to_string(230000 + r) + "\" user_id=\"1001\" group_id=\"100\" time_stamp=\"0\">\n";
    x += "       <CommandArray>\n        <Command width=\"32\" depth=\"1\" nppn=\"32\" "
         "memory=\"1024\" architecture=\"XT\" cmd=\"BASIL\"/>\n       </CommandArray>\n";
    x += "      </Application>\n     </ApplicationArray>\n    </Reservation>\n";
  }
  x += "   </ReservationArray>\n  </Inventory>\n </ResponseData>\n</BasilResponse>\n";
  return x;
}

}  // namespace basil::testing
