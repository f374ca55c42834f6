// basild's answer as the lean front (apbasil_proxy) reads it off the
// control socket (apbasil_proxy/lean_answer.h): HTTP, a body kept whole or
// streamed, LZ4 or not. The first byte says how the socket cuts the rest
// into reads. Whatever the bytes: no crash, no leak, a body kept whole no
// longer than the limit; and the outcome and every byte passed on do not
// depend on how the bytes were cut (checked against reading them whole).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "apbasil_proxy/lean_answer.h"

namespace {

struct Outcome {
  int rc = 0;
  int basil = 0, streaming = 0;
  std::string out, body;
};

Outcome read_answer(const char* p, std::size_t n, std::size_t step) {
  Outcome o;
  const int fd = ::memfd_create("fuzz_lean_answer", MFD_CLOEXEC);
  if (fd < 0) __builtin_trap();
  lean_answer a;
  lean_answer_init(&a, fd);
  o.rc = 0;
  for (std::size_t at = 0; at < n && o.rc == 0; at += step)
    o.rc = lean_answer_feed(&a, p + at, n - at < step ? n - at : step);
  if (o.rc == 0 && !a.complete) o.rc = lean_answer_feed(&a, "", 0);
  if (lean_answer_finish(&a) != 0) o.rc = -1;
  if ((o.rc != 0) != (a.why != nullptr)) __builtin_trap();  // an error always says why
  if (a.body_len > (std::size_t{64} << 20)) __builtin_trap();
  o.basil = a.basil;
  o.streaming = a.streaming;
  o.body.assign(a.body != nullptr ? a.body : "", a.body_len);
  o.out.resize(a.passed_on);
  if (::pread(fd, o.out.data(), o.out.size(), 0) != static_cast<ssize_t>(o.out.size())) __builtin_trap();
  lean_answer_free(&a);
  ::close(fd);
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t step = 1 + data[0] % 97;
  const char* p = reinterpret_cast<const char*>(data + 1);
  const Outcome cut = read_answer(p, size - 1, step);
  const Outcome whole = read_answer(p, size - 1, size);
  if (cut.rc != whole.rc) __builtin_trap();
  if (whole.rc == 0 &&
      (cut.basil != whole.basil || cut.streaming != whole.streaming || cut.out != whole.out || cut.body != whole.body))
    __builtin_trap();
  return 0;
}
