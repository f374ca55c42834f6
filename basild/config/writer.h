// The configuration's writer, internal to config/ (format_config is in
// config.h): the helpers config.cc's warnings share with it.
#pragma once

#include <cstdint>
#include <string>

namespace basild::config_detail {

// A file mode as four octal digits: "0660".
std::string octal(std::uint32_t mode);

}  // namespace basild::config_detail
