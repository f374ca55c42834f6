// The response encoder: a Response -> a BasilResponse document in its
// dialect. Its members are written in two files: encode_response.cc (the
// envelope, ENGINE, SUMMARY, STATUS, SWITCH and the RESERVE/CONFIRM/RELEASE
// answers) and encode_inventory.cc (INVENTORY: nodes and reservations).
// Private to basil_proto.
#pragma once

#include <variant>
#include <vector>

#include "basil_proto/dialect.h"
#include "basil_proto/model.h"
#include "basil_proto/status.h"
#include "basil_proto/src/encode_common.h"
#include "basil_proto/src/xml_writer.h"

namespace basil::encode_detail {

class ResponseEncoder {
 public:
  ResponseEncoder(XmlWriter& w, const Response& r) : w_(w), r_(r), d_(r.dialect) {}

  Status run();

 private:
  // True when the response's dialect has what `mask` (from the tables) marks.
  bool says(DMask mask) const { return encode_detail::says(d_, mask); }

  Status write(const std::monostate&) { return {}; }
  Status write(const EngineInfo& e);

  // encode_inventory.cc
  Status write(const Inventory& inv);
  Status node_refused(const Node& n, const char* what, const char* rule);
  Status write_node(const Node& n);
  Status check_node(const Node& n);
  Status write_segments(const Node& n, const std::vector<Segment>& segments, bool of_socket);
  void write_processors(const std::vector<Processor>& processors, bool in_compute_unit);
  void write_memory(const std::vector<Memory>& memory);
  Status write_labels(const std::vector<Label>& labels);
  Status write_accelerators(const std::vector<Accelerator>& accelerators);
  Status write_reservation(const Reservation& r);

  Status write(const Summary& s);
  void write_items(const std::vector<ItemResult>& reservations,
                   const std::vector<ItemResult>& applications);
  Status write(const StatusInfo& s);
  Status write(const Switched& s);
  Status write(const Reserved& r);
  Status write(const Confirmed& c);
  Status write(const Released& r);

  XmlWriter& w_;
  const Response& r_;
  Dialect d_;
};

}  // namespace basil::encode_detail
