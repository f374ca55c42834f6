// Writing a whole buffer to a descriptor: the one copy every program of the
// project uses (the emulator's answers, the proxies' output, basild's XML
// log, basil-slurm's children). Needs the C library only, so that a static
// per-call program that links it takes nothing else along.
#pragma once

#include <cstddef>
#include <string_view>

namespace basil::process {

// Writes all of `bytes` to `fd`. A short write goes on from where it
// stopped, EINTR is retried, and EAGAIN (a descriptor set O_NONBLOCK, maybe
// by another process sharing it) waits until `fd` takes more. False at the
// first other error (EPIPE: the reader is gone), with errno set; `written`,
// when given, gets the bytes that went out. It leaves signals alone: a
// write to a pipe without a reader raises SIGPIPE unless the caller ignores it.
bool write_all(int fd, std::string_view bytes, std::size_t* written = nullptr);

}  // namespace basil::process
