// Whole files, for tests and benchmarks. No gtest here.
#pragma once

#include <string>

namespace basil_test {

// The file's bytes; "" when it cannot be read.
std::string read_file(const std::string& path);

// `text` as the whole of the file (created, or truncated).
void write_file(const std::string& path, const std::string& text);

}  // namespace basil_test
