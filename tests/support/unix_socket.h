// Unix stream sockets for tests and benchmarks: a client's connection and a
// listener of one's own (a fake basild, a stale socket file). Plain
// descriptors, close-on-exec, that the caller closes. No gtest here.
#pragma once

#include <string>

namespace basil_test {

// Connected to `path`, or -1 (errno set; ENAMETOOLONG past sun_path).
int connect_unix(const std::string& path);

// Bound to `path` and, when backlog > 0, listening; -1 on failure.
int listen_unix(const std::string& path, int backlog);

}  // namespace basil_test
