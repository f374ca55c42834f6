/* apbasil_proxy, the program the scheduler runs for every BASIL call on an
 * external login node: the fast path only, in C. It reads the request,
 * sends it to the local basild's control socket, named by its card
 * (card.h), and writes the answer.
 *
 * Everything else belongs to the two programs beside it (or in
 * ../libexec/basild), which it executes with the request on their standard
 * input:
 *   apbasil_proxy-full      when there is no usable card (it reads
 *                           basild.conf, writes the card, and makes the
 *                           call), when nothing was sent (basild not
 *                           reachable), and when basild refused the call
 *                           (refused calls were not acted on: sending one
 *                           again is safe);
 *   apbasil_proxy-fallback  when the exchange broke after the request went
 *                           out (it may be with ALPS: never sent twice); it
 *                           writes the FAILURE.
 *
 * The split is for start-up time, which the scheduler pays on every call.
 * Linked statically against musl, this program starts in a fifth of the
 * time of a static glibc one on a virtual machine (glibc asks the processor
 * for its features and caches at start, and every such question leaves the
 * virtual machine), and it links no C++ runtime, no TOML, XML or ssh
 * library: basild.conf is read by apbasil_proxy-full; basild's answer is
 * read by lean_answer.c (HTTP by Debian's http-parser, LZ4 by liblz4), and
 * what follows it is lean_next.c's rule. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "apbasil_proxy/card.h"
#include "apbasil_proxy/front_constants.h"
#include "apbasil_proxy/lean_answer.h"
#include "apbasil_proxy/lean_next.h"

enum {
  kMaxRequest = APBASIL_PROXY_MAX_REQUEST_BYTES,
  kReadStep = 256 << 10,
};

static const char kDefaultConfig[] = "/etc/basild/basild.conf";

static void say(const char* a, const char* b) {
  char line[1024];
  const int n = snprintf(line, sizeof line, "apbasil_proxy: %s%s\n", a, b);
  if (n > 0) (void)lean_write_all(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* ---- the programs beside this one ---- */

static char self_dir[PATH_MAX];

static void find_self_dir(void) {
  const ssize_t n = readlink("/proc/self/exe", self_dir, sizeof self_dir - 1);
  if (n <= 0) {
    self_dir[0] = '\0';
    return;
  }
  self_dir[n] = '\0';
  char* slash = strrchr(self_dir, '/');
  if (slash != NULL) *slash = '\0';
}

/* Executes NAME beside this program, then in ../libexec/basild, with the
 * request on its standard input; returns only when neither could be run. */
static void run_beside(const char* name, char** argv, const char* request, size_t len) {
  const int fd = memfd_create("apbasil_proxy-request", 0);
  if (fd < 0 || lean_write_all(fd, request, len) != 0 || lseek(fd, 0, SEEK_SET) != 0 || dup2(fd, 0) != 0) {
    say("cannot pass the request on: ", strerror(errno));
    return;
  }
  if (fd != 0) close(fd);
  signal(SIGPIPE, SIG_DFL); /* as the scheduler started this program */
  if (self_dir[0] == '\0') find_self_dir();
  char path[PATH_MAX + 64];
  argv[0] = (char*)name;
  snprintf(path, sizeof path, "%s/%s", self_dir, name);
  execv(path, argv);
  snprintf(path, sizeof path, "%s/../libexec/basild/%s", self_dir, name);
  execv(path, argv);
  char why[PATH_MAX + 128];
  snprintf(why, sizeof why, "%s beside %s or in ../libexec/basild (%s)", name, self_dir, strerror(errno));
  say("cannot run ", why);
}

/* apbasil_proxy-full does the whole call itself, with the same arguments. */
static int run_full(char** argv, const char* request, size_t len) {
  run_beside("apbasil_proxy-full", argv, request, len);
  return 1;
}

/* apbasil_proxy-fallback writes the FAILURE for an exchange that broke
 * after the request went out. */
static int run_fallback(const char* config, const char* why, const char* request, size_t len) {
  char* argv[] = {NULL, "--config", (char*)config, "--socket-outcome", "broken", "--why", (char*)why, NULL};
  run_beside("apbasil_proxy-fallback", argv, request, len);
  return 1;
}

/* ---- the exchange with basild ---- */

struct exchange {
  int fd;
  int64_t deadline_ms;
  struct lean_answer answer;
};

static int64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Waits for `events` on the socket until the deadline: 1 ready, 0 timed out. */
static int wait_for(struct exchange* x, short events) {
  for (;;) {
    const int64_t left = x->deadline_ms - now_ms();
    if (left <= 0) return 0;
    struct pollfd p = {.fd = x->fd, .events = events};
    const int r = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
    if (r > 0) return 1;
    if (r == 0) return 0;
    if (errno != EINTR) return 1; /* let the read or write say what is wrong */
  }
}

static int send_request(struct exchange* x, const char* request, size_t len, const char** why) {
  char head[256];
  const int hl = snprintf(head, sizeof head,
                          "POST " APBASIL_PROXY_BASIL_TARGET " HTTP/1.1\r\nHost: localhost\r\n"
                          "User-Agent: apbasil_proxy\r\nContent-Type: application/xml\r\n"
                          "Accept-Encoding: lz4\r\nContent-Length: %zu\r\n\r\n",
                          len);
  struct iovec v[2] = {{head, (size_t)hl}, {(void*)request, len}};
  int i = 0;
  while (i < 2) {
    if (!wait_for(x, POLLOUT)) {
      *why = "timed out sending the request to basild";
      return -1;
    }
    const ssize_t w = writev(x->fd, v + i, 2 - i);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w < 0) {
      *why = strerror(errno);
      return -1;
    }
    size_t left = (size_t)w;
    while (i < 2 && left >= v[i].iov_len) left -= v[i++].iov_len;
    if (i < 2) {
      v[i].iov_base = (char*)v[i].iov_base + left;
      v[i].iov_len -= left;
    }
  }
  return 0;
}

/* Reads and parses the answer; 0 when it is complete, else -1 with `why`. */
static int read_answer(struct exchange* x, const char** why) {
  char* buf = malloc(kReadStep);
  if (buf == NULL) {
    *why = "out of memory";
    return -1;
  }
  struct lean_answer* a = &x->answer;
  while (!a->complete) {
    if (!wait_for(x, POLLIN)) {
      a->why = "timed out waiting for basild's answer";
      break;
    }
    const ssize_t r = read(x->fd, buf, kReadStep);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r < 0) {
      a->why = strerror(errno);
      break;
    }
    if (lean_answer_feed(a, buf, (size_t)r) != 0) break;
  }
  free(buf);
  const int rc = lean_answer_finish(a);
  *why = a->why;
  return rc;
}

/* ---- main ---- */

static const char kUsage[] =
    "usage: apbasil_proxy [--config FILE]   (request on stdin, answer on stdout)\n"
    "FILE defaults to $APBASIL_PROXY_CONFIG, then /etc/basild/basild.conf\n";

int main(int argc, char** argv) {
  const char* config = getenv("APBASIL_PROXY_CONFIG");
  if (config == NULL || *config == '\0') config = kDefaultConfig;
  for (int i = 1; i < argc; ++i) {
    if ((strcmp(argv[i], "--config") == 0 || strcmp(argv[i], "-c") == 0) && i + 1 < argc) {
      config = argv[++i];
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      return lean_write_all(1, kUsage, sizeof kUsage - 1) == 0 ? 0 : 1;
    }
    /* Anything else is ignored, as apbasil ignores what it does not know. */
  }

  /* The request. Unreadable or over 1 MiB: apbasil_proxy-full says so. */
  static char request[kMaxRequest + 1];
  size_t len = 0;
  int read_error = 0;
  while (len < sizeof request) {
    const ssize_t r = read(0, request + len, sizeof request - len);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) read_error = 1;
    if (r <= 0) break;
    len += (size_t)r;
  }
  /* Over 1 MiB, it gets the 1 MiB and the byte that says so. */
  if (read_error || len > kMaxRequest) return run_full(argv, request, len);

  char card_path[BASIL_CARD_PATH_MAX];
  struct basil_card card;
  if (basil_card_path(card_path, sizeof card_path, basil_card_dir(), geteuid(), config) != 0 ||
      basil_card_load(card_path, config, geteuid(), &card) != BASIL_CARD_OK)
    return run_full(argv, request, len);

  struct exchange x;
  memset(&x, 0, sizeof x);
  lean_answer_init(&x.answer, 1);
  x.deadline_ms = now_ms() + card.guard_ms;
  x.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  memcpy(addr.sun_path, card.socket, strlen(card.socket) + 1);
  /* Nothing sent yet: apbasil_proxy-full tries again and says what is wrong. */
  if (x.fd < 0 || connect(x.fd, (struct sockaddr*)&addr, sizeof addr) != 0) return run_full(argv, request, len);

  signal(SIGPIPE, SIG_IGN);
  const char* why = NULL;
  const int failed = send_request(&x, request, len, &why) != 0 || read_answer(&x, &why) != 0;
  close(x.fd);
  const struct lean_answer* a = &x.answer;
  const struct lean_exchange_end end = {failed, a->basil, a->streaming, a->passed_on};
  const enum lean_next next = lean_next_step(&end);
  int rc = 0;
  if (next == LEAN_BROKE_OFF) {
    char line[256];
    snprintf(line, sizeof line, "the answer broke off after %llu bytes: ", (unsigned long long)a->passed_on);
    say(line, why);
    rc = 1;
  } else if (next == LEAN_WRITE_BODY) {
    rc = lean_answer_write_body(&x.answer) == 0 ? 0 : 1;
  }
  char text[512];
  if (next == LEAN_FALLBACK) snprintf(text, sizeof text, "control socket %s: %s", card.socket, why);
  lean_answer_free(&x.answer);
  if (next == LEAN_FALLBACK) return run_fallback(config, text, request, len);
  if (next == LEAN_FULL) return run_full(argv, request, len);
  return rc;
}
