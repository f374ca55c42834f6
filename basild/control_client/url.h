// %-encoding of the query values a client puts in a control socket target;
// the server decodes them (basild/control/registry.h, parse_target).
#pragma once

#include <string>
#include <string_view>

namespace basild::control {

// %-encoding of one query value ("a b&c" -> "a%20b%26c"): every byte but the
// unreserved ones (RFC 3986: letters, digits, "-._~").
std::string url_encode(std::string_view s);

}  // namespace basild::control
