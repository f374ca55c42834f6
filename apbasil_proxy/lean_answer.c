/* See lean_answer.h. */
#define _GNU_SOURCE
#include "apbasil_proxy/lean_answer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "apbasil_proxy/front_constants.h"

enum {
  kPipeBytes = APBASIL_PROXY_PIPE_BYTES,
  kInflateStep = APBASIL_PROXY_INFLATE_STEP,
  kMaxBody = 64 << 20, /* an answer basild does not stream: its own FAILURE or a small answer */
};

int lean_write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static void copy_bounded(char* dst, size_t cap, size_t* len, const char* at, size_t n) {
  if (*len + n >= cap) n = *len < cap - 1 ? cap - 1 - *len : 0;
  memcpy(dst + *len, at, n);
  *len += n;
  dst[*len] = '\0';
}

/* A value longer than `cap` is cut, and then matches none of ours. */
static void set_text(char* dst, size_t cap, const char* src) {
  size_t n = strlen(src);
  if (n >= cap) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

static void end_header(struct lean_answer* x) {
  if (!x->in_value) return;
  if (strcasecmp(x->field, "content-type") == 0) set_text(x->content_type, sizeof x->content_type, x->value);
  if (strcasecmp(x->field, "content-encoding") == 0)
    set_text(x->content_encoding, sizeof x->content_encoding, x->value);
  x->field_len = x->value_len = 0;
  x->field[0] = x->value[0] = '\0';
  x->in_value = 0;
}

static int on_field(http_parser* p, const char* at, size_t n) {
  struct lean_answer* x = p->data;
  end_header(x);
  copy_bounded(x->field, sizeof x->field, &x->field_len, at, n);
  return 0;
}

static int on_value(http_parser* p, const char* at, size_t n) {
  struct lean_answer* x = p->data;
  x->in_value = 1;
  copy_bounded(x->value, sizeof x->value, &x->value_len, at, n);
  return 0;
}

void lean_answer_grow_pipe(int fd) {
  const int size = fcntl(fd, F_GETPIPE_SZ);
  if (size >= 0 && size < kPipeBytes) (void)fcntl(fd, F_SETPIPE_SZ, kPipeBytes);
}

/* 200 is ALPS's answer; another status with a BASIL document is basild's
 * own FAILURE for a call it took (failures=basil). Anything else: basild
 * refused the call. */
static int on_head(http_parser* p) {
  struct lean_answer* x = p->data;
  end_header(x);
  x->basil = p->status_code == 200 || strcmp(x->content_type, "application/xml") == 0;
  x->streaming = x->basil && (p->flags & F_CHUNKED) != 0;
  if (!x->streaming) return 0;
  lean_answer_grow_pipe(x->out_fd);
  if (x->content_encoding[0] == '\0') return 0;
  if (strcmp(x->content_encoding, "lz4") != 0) {
    x->why = "basild sent the answer in an unknown encoding";
    return 1;
  }
  x->inflated = malloc(kInflateStep);
  if (x->inflated == NULL || LZ4F_isError(LZ4F_createDecompressionContext(&x->lz4, LZ4F_VERSION))) {
    x->why = "cannot decompress the answer: out of memory";
    return 1;
  }
  return 0;
}

static int inflate(struct lean_answer* x, const char* at, size_t n) {
  while (n > 0) {
    if (x->lz4_ended) {
      x->why = "the compressed answer goes on after its LZ4 frame ended";
      return 1;
    }
    size_t out = kInflateStep, in = n;
    const size_t hint = LZ4F_decompress(x->lz4, x->inflated, &out, at, &in, NULL);
    if (LZ4F_isError(hint)) {
      x->why = "the compressed answer is not LZ4";
      return 1;
    }
    if (out > 0 && lean_write_all(x->out_fd, x->inflated, out) != 0) {
      x->why = "the answer could not be written";
      return 1;
    }
    x->passed_on += out;
    if (hint == 0) x->lz4_ended = 1;
    at += in;
    n -= in;
    if (in == 0 && out == 0) break; /* nothing consumed nor made: wait for more input */
  }
  return 0;
}

static int on_body(http_parser* p, const char* at, size_t n) {
  struct lean_answer* x = p->data;
  if (x->streaming && x->lz4 != NULL) return inflate(x, at, n);
  if (x->streaming) {
    if (lean_write_all(x->out_fd, at, n) != 0) {
      x->why = "the answer could not be written";
      return 1;
    }
    x->passed_on += n;
    return 0;
  }
  if (x->body_len + n > kMaxBody) {
    x->why = "basild's answer is too long";
    return 1;
  }
  if (x->body_len + n > x->body_cap) {
    size_t cap = x->body_cap ? x->body_cap : 4096;
    while (cap < x->body_len + n) cap *= 2;
    char* b = realloc(x->body, cap);
    if (b == NULL) {
      x->why = "out of memory";
      return 1;
    }
    x->body = b;
    x->body_cap = cap;
  }
  memcpy(x->body + x->body_len, at, n);
  x->body_len += n;
  return 0;
}

void lean_answer_free(struct lean_answer* x) {
  free(x->body);
  free(x->inflated);
  if (x->lz4 != NULL) LZ4F_freeDecompressionContext(x->lz4);
  x->body = x->inflated = NULL;
  x->lz4 = NULL;
}

/* The answer ends here: whatever follows on the connection is not read
 * (a second response's head would start a second answer). */
static int on_complete(http_parser* p) {
  ((struct lean_answer*)p->data)->complete = 1;
  http_parser_pause(p, 1);
  return 0;
}

void lean_answer_init(struct lean_answer* a, int out_fd) {
  memset(a, 0, sizeof *a);
  a->out_fd = out_fd;
  a->settings.on_header_field = on_field;
  a->settings.on_header_value = on_value;
  a->settings.on_headers_complete = on_head;
  a->settings.on_body = on_body;
  a->settings.on_message_complete = on_complete;
  http_parser_init(&a->parser, HTTP_RESPONSE);
  a->parser.data = a;
}

int lean_answer_feed(struct lean_answer* a, const char* bytes, size_t n) {
  if (a->why != NULL) return -1;
  if (a->complete) return 0;
  const size_t used = http_parser_execute(&a->parser, &a->settings, bytes, n);
  if (a->why != NULL) return -1;
  if (a->complete) return 0; /* paused there: the rest is not the answer's */
  /* The connection's end inside the answer: said plainly, not as
     http-parser's "stream ended at an unexpected time". */
  if (n == 0 && !a->complete) {
    a->why = "basild closed the connection before the answer was complete";
    return -1;
  }
  if (HTTP_PARSER_ERRNO(&a->parser) != HPE_OK || used != n) {
    a->why = http_errno_description(HTTP_PARSER_ERRNO(&a->parser));
    return -1;
  }
  return 0;
}

int lean_answer_finish(struct lean_answer* a) {
  if (a->why != NULL) return -1;
  if (!a->complete) {
    a->why = "basild's answer is not complete";
    return -1;
  }
  if (a->lz4 != NULL && !a->lz4_ended) {
    a->why = "the compressed answer ended inside its LZ4 frame";
    return -1;
  }
  return 0;
}

int lean_answer_write_body(struct lean_answer* a) {
  if (a->body_len > (size_t)64 << 10) lean_answer_grow_pipe(a->out_fd);
  return lean_write_all(a->out_fd, a->body, a->body_len);
}
