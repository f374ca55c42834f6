// Helpers of the decoding tests (decoder_test.cc, decoder_dialect_test.cc,
// decoder_structure_test.cc; decoder_request_test.cc takes strict mode): a
// response document around a body, strict mode, and whether a warning says
// where it happened.
#pragma once

#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <variant>

#include "basil_proto/codec.h"
#include "basil_proto/model.h"

namespace basil {

// True when `w` reads "LINE:COL: " followed by `rest` (a prefix of the
// message; empty: any message). `line` 0: any line.
inline bool located(const std::string& w, std::string_view rest = "", int line = 0) {
  std::size_t i = 0;
  auto digits = [&]() {
    const std::size_t from = i;
    while (i < w.size() && std::isdigit(static_cast<unsigned char>(w[i])) != 0) ++i;
    return w.substr(from, i - from);
  };
  const std::string l = digits();
  if (l.empty() || i >= w.size() || w[i] != ':') return false;
  ++i;
  if (digits().empty() || w.compare(i, 2, ": ") != 0) return false;
  if (line != 0 && std::stoi(l) != line) return false;
  return w.compare(i + 2, rest.size(), rest) == 0;
}

inline DecodeOptions strict_mode() {
  DecodeOptions o;
  o.strict = true;
  return o;
}

// A response around `body` (the children of ResponseData).
inline std::string response(std::string_view protocol, std::string_view method,
                            std::string_view body, std::string_view data_attrs = "") {
  std::string x = "<?xml version=\"1.0\"?>\n<BasilResponse protocol=\"";
  x.append(protocol);
  x += "\">\n <ResponseData status=\"SUCCESS\" method=\"";
  x.append(method);
  x += '"';
  x.append(data_attrs);
  x += ">\n";
  x.append(body);
  x += "\n </ResponseData>\n</BasilResponse>\n";
  return x;
}

inline std::string inventory(std::string_view protocol, std::string_view inv_attrs,
                             std::string_view nodes,
                             std::string_view reservations = "<ReservationArray/>") {
  std::string b = "  <Inventory";
  b.append(inv_attrs);
  b += ">\n   <NodeArray>\n";
  b.append(nodes);
  b += "\n   </NodeArray>\n   ";
  b.append(reservations);
  b += "\n  </Inventory>";
  return response(protocol, "QUERY", b);
}

inline const Inventory& inv_of(const Result<Decoded>& r) {
  return std::get<Inventory>(r->response().body);
}

}  // namespace basil
