/* basild's answer to the lean front (lean_front.c) as it comes off the
 * control socket: HTTP/1.1 read by Debian's http-parser; a body that
 * basild sends whole kept for writing, one it streams (chunked) passed on
 * to the output as it arrives, LZ4 undone on the way (liblz4's frame API).
 * No socket here: the bytes are fed in, so the fuzzer and the unit tests
 * drive it as the front does. */
#ifndef APBASIL_PROXY_LEAN_ANSWER_H
#define APBASIL_PROXY_LEAN_ANSWER_H

#include <http_parser.h>
#include <lz4frame.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lean_answer {
  int out_fd; /* where a streamed answer goes (the scheduler's pipe) */
  http_parser parser;
  http_parser_settings settings;
  /* the response's head */
  char field[64];
  size_t field_len;
  char value[128];
  size_t value_len;
  int in_value;
  char content_type[128];
  char content_encoding[32];
  int complete;  /* the whole response was read */
  int basil;     /* its body is a BASIL document (else: basild refused the call) */
  int streaming; /* and is passed on as it comes */
  /* a body kept whole */
  char* body;
  size_t body_len, body_cap;
  /* a body passed on as it arrives */
  LZ4F_dctx* lz4;
  int lz4_ended;
  char* inflated;
  uint64_t passed_on;
  const char* why; /* why the answer could not be taken */
};

/* Ready to read an answer; a streamed one goes to `out_fd`. */
void lean_answer_init(struct lean_answer* a, int out_fd);

/* Takes `n` bytes read off the socket; n == 0: the connection closed.
 * 0, or -1 with `why` set (then feed no more). Bytes after the end of the
 * answer are not read. */
int lean_answer_feed(struct lean_answer* a, const char* bytes, size_t n);

/* After the last feed: 0 when the answer came whole, else -1 with `why`. */
int lean_answer_finish(struct lean_answer* a);

/* Writes a body that basild sent whole to `out_fd`: 0, or -1. */
int lean_answer_write_body(struct lean_answer* a);

/* Frees what the answer holds; `a` may then be initialised again. */
void lean_answer_free(struct lean_answer* a);

/* Writes all `n` bytes (again after a signal): 0, or -1 (errno). */
int lean_write_all(int fd, const char* p, size_t n);

/* Makes a pipe at `fd` hold APBASIL_PROXY_PIPE_BYTES (a long answer then
 * wakes its reader some 9 times per 9 MB instead of some 140). */
void lean_answer_grow_pipe(int fd);

#ifdef __cplusplus
}
#endif

#endif
