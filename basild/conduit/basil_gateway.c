/*
 * basil_gateway: the remote half of basild's ssh conduit in gateway mode.
 *
 * Runs on the main system's login node, started once per ssh session by
 * basild (or by the forced command of a restricted key). Reads framed BASIL
 * requests on stdin, runs apbasil for each (several at once, each in a
 * process group of its own, the request on its stdin, never through a
 * shell) and writes framed answers on stdout. It runs apkill the same way
 * (stdin empty) when asked to signal an application.
 *
 * Build it on the main system with its own compiler; it needs only the C
 * library and C99 (apbasil_proxy(8), "The gateway helper"):
 *   cc -std=c99 -O2 -o basil_gateway basil_gateway.c
 *   install -m 755 basil_gateway /usr/local/libexec/basil_gateway
 * or, where the system has liblz4 (its headers: lz4-devel on SLES), with
 * the answers compressed on their way (the Z frame below):
 *   cc -std=c99 -O2 -DBASIL_GATEWAY_LZ4 -o basil_gateway basil_gateway.c -llz4
 *
 * The frames (basild/conduit/frames.h); numbers are unsigned decimal:
 *
 *   out, once: "BASIL-GATEWAY 6[ lz4]\n"              (" lz4": built with BASIL_GATEWAY_LZ4)
 *   in:  "I <len>\n" <identity>       the conduit's identity (basild's host and state
 *                                     database): a helper of the same identity still
 *                                     running is ended first, with its calls (below)
 *   in:  "Q <id> <len>\n" <request>   run apbasil with the request on its stdin
 *   in:  "A <id> <signal> <apid>\n"   run APKILL [ARGS...] -<signal> <apid> (signal 1 to 64;
 *                                     answered how 2, value ENOENT, without --apkill)
 *   in:  "K <id>\n"                   kill that call's process group
 *   in:  "Z lz4\n"                    from now on each call's stdout (its D frames' bytes
 *                                     and its R frame's <out>, together) is one LZ4 frame;
 *                                     only to a helper whose greeting lists lz4
 *   out: "D <id> <len>\n" <bytes>     a piece of a long answer's stdout, as it comes
 *                                     (once STREAM_BYTES of it wait)
 *   out: "R <id> <how> <value> <outlen> <errlen>\n" <stdout> <stderr>
 *                                     the end of a call, with the rest of its stdout;
 *                                     how: 0 exited (value: exit code), 1 killed (value:
 *                                     signal), 2 could not start (value: errno), 3 stdout
 *                                     over --max-output
 *   out: "E <len>\n" <message>        fatal protocol error, then the helper exits 1
 *
 * Version 6 is the plain protocol: versions 3 to 5 had a flow window and
 * credits (W, C), an apbasil started ahead (S) and answers sent before
 * apbasil's exit; basild no longer asks for them, and this helper does
 * not know them.
 *
 * Nothing the helper runs outlives basild's hold on it. End of file on
 * stdin, or stdout hung up (the ssh session gone: basild stopped, killed,
 * or its host lost), kills every call's process group (apbasil and
 * whatever it started) with SIGKILL and the helper exits; so does SIGTERM,
 * SIGINT or SIGHUP. A basild whose session was lost without the login node
 * seeing it end (its host died) starts a new helper with the same identity;
 * that helper sends the old one SIGTERM, and SIGKILL if it is still there
 * PREDECESSOR_WAIT_MS later, through a lock file named after the identity
 * in --lock-dir (default /tmp/basil_gateway.<uid>, made 0700, which must be
 * the helper's user's alone). Helpers of other identities (another basild)
 * are not touched.
 *
 * Usage: basil_gateway [--max-running N] [--max-output BYTES]
 *                      [--max-request BYTES] [--apkill APKILL]
 *                      [--apkill-arg ARG]... [--lock-dir DIR] APBASIL [ARGS...]
 * (each --apkill-arg is one word put before "-<signal> <apid>").
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef BASIL_GATEWAY_LZ4
#include <lz4frame.h>
#ifndef LZ4F_HEADER_SIZE_MAX /* lz4 before 1.8 */
#define LZ4F_HEADER_SIZE_MAX 19
#endif
#endif

int flock(int fd, int operation); /* <sys/file.h>, outside POSIX */

#define VERSION 6
#define MAX_HEADER 128
#define MAX_STDERR (64 * 1024)
#define MAX_CALLS 256
#define MAX_IDENTITY 1024
/* Stdout goes on in a D frame once this much of it waits, or (compressed)
   once this much of it went into what waits: XML compresses some
   hundredfold, so an 8.9-MB INVENTORY travels in 9 frames, not 137. */
#define STREAM_BYTES (64 * 1024)
#define ZSTREAM_BYTES (1024 * 1024)
/* What waits leaves anyway once apbasil has written nothing for this long. */
#define STREAM_WAIT_MS 5
/* How long a predecessor has to end after SIGTERM, and after SIGKILL. */
#define PREDECESSOR_WAIT_MS 4000
#define PREDECESSOR_KILL_MS 1000

struct buf {
  char *data;
  size_t len, cap;
};

struct call {
  int used;
  unsigned long long id;
  pid_t pid; /* the process group's leader; 0 once reaped */
  int in_fd, out_fd, err_fd;
  char *req; /* the request, written to apbasil's stdin as it takes it */
  size_t req_len, req_off;
  struct buf out, err;
  size_t raw;   /* stdout bytes read (before compression) */
  size_t raw_waiting; /* of those, the ones in out (not yet in a D frame) */
  int status;   /* waitpid's, once reaped */
  int overflow; /* stdout over max_output: killed */
  int spawn_errno;
#ifdef BASIL_GATEWAY_LZ4
  LZ4F_cctx *lz4; /* stdout's LZ4 frame (Z frame); NULL: sent as it is */
#endif
};

/* A request read while max_running calls run. */
struct pending {
  unsigned long long id;
  char *req;
  size_t len;
  int signal; /* an apkill of apid with this signal; 0: apbasil */
  unsigned long long apid;
  struct pending *next;
};

extern char **environ;

static struct call calls[MAX_CALLS];
static struct pending *queue_head, *queue_tail;
static size_t max_running = 4, max_output = 256u << 20, max_request = 1u << 20;
static char **apbasil_argv, **apkill_argv;
static char apkill_signal_word[8], apkill_apid_word[24];
static const char *lock_dir;
static int wake_pipe[2] = {-1, -1}; /* SIGCHLD and the stop signals write a byte */
static volatile sig_atomic_t stop_requested;
#ifdef BASIL_GATEWAY_LZ4
static int compress_out; /* Z frame seen: calls started from now on compress */
static LZ4F_preferences_t lz4_prefs;
#endif

/* ---------------------------------------------------------------- small things */

static int buf_reserve(struct buf *b, size_t n) {
  size_t cap = b->cap ? b->cap : 4096;
  char *d;
  if (b->len + n <= b->cap) return 0;
  while (cap < b->len + n) cap *= 2;
  d = (char *)realloc(b->data, cap);
  if (!d) return -1;
  b->data = d;
  b->cap = cap;
  return 0;
}

static void buf_free(struct buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

static long long monotonic_ms(void) {
  struct timespec t;
  if (clock_gettime(CLOCK_MONOTONIC, &t) != 0) return 0;
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void sleep_ms(long ms) {
  struct timespec t;
  t.tv_sec = ms / 1000;
  t.tv_nsec = (ms % 1000) * 1000000L;
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

/* Kills every call's process group and reaps the leaders: nothing the
   helper started outlives it. */
static void kill_all(void) {
  size_t i;
  for (i = 0; i < MAX_CALLS; i++) {
    if (!calls[i].used || calls[i].pid <= 0) continue;
    kill(-calls[i].pid, SIGKILL);
    while (waitpid(calls[i].pid, &calls[i].status, 0) < 0 && errno == EINTR) {
    }
    calls[i].pid = 0;
  }
}

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static void fatal(const char *msg) {
  char head[MAX_HEADER];
  size_t n = strlen(msg);
  snprintf(head, sizeof head, "E %lu\n", (unsigned long)n);
  (void)write_all(1, head, strlen(head));
  (void)write_all(1, msg, n);
  kill_all();
  exit(1);
}

/* A frame, header and two bodies, in one writev (a small answer leaves in
   one ssh packet). A write error means the session is gone. */
static void write_frame(const char *head, const char *p1, size_t n1, const char *p2, size_t n2) {
  struct iovec iov[3];
  size_t total, done = 0, k;
  iov[0].iov_base = (char *)head;
  iov[0].iov_len = strlen(head);
  iov[1].iov_base = (char *)p1;
  iov[1].iov_len = n1;
  iov[2].iov_base = (char *)p2;
  iov[2].iov_len = n2;
  total = iov[0].iov_len + n1 + n2;
  while (done < total) {
    ssize_t w = writev(1, iov, 3);
    size_t left;
    if (w < 0) {
      if (errno == EINTR) continue;
      kill_all();
      exit(0);
    }
    done += (size_t)w;
    left = (size_t)w;
    for (k = 0; k < 3; k++) {
      size_t take = left < iov[k].iov_len ? left : iov[k].iov_len;
      iov[k].iov_base = (char *)iov[k].iov_base + take;
      iov[k].iov_len -= take;
      left -= take;
    }
  }
}

static void on_signal(int sig) {
  int saved = errno;
  char b = 0;
  if (sig != SIGCHLD) stop_requested = 1;
  if (write(wake_pipe[1], &b, 1) < 0) { /* full: a wake-up is pending anyway */
  }
  errno = saved;
}

/* ---------------------------------------------------------------- the predecessor */

static unsigned long long fnv1a(const char *p, size_t n) {
  unsigned long long h = 1469598103934665603ull;
  while (n-- > 0) {
    h ^= (unsigned char)*p++;
    h *= 1099511628211ull;
  }
  return h;
}

/* The directory of the identity locks: --lock-dir, or
   /tmp/basil_gateway.<uid>; ours alone (no one else may write in it, so no
   one else can plant a lock that names a pid to kill). */
static int open_lock_dir(char *dir, size_t n) {
  struct stat st;
  if (lock_dir)
    snprintf(dir, n, "%s", lock_dir);
  else
    snprintf(dir, n, "/tmp/basil_gateway.%lu", (unsigned long)getuid());
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) return -1;
  if (lstat(dir, &st) != 0) return -1;
  if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 022) != 0) {
    errno = EPERM;
    return -1;
  }
  return 0;
}

/* Takes the lock of `identity`; a helper holding it is asked to end
   (SIGTERM, then SIGKILL) and waited for. The lock is held, open, until
   this helper exits. Trouble is said on stderr and is not fatal: the
   helper runs calls without a lock. */
static void end_predecessor(const char *identity, size_t n) {
  char dir[PATH_MAX], path[PATH_MAX + 64], pidtext[32];
  long long until;
  pid_t holder = 0;
  int fd, sent_kill = 0;
  if (open_lock_dir(dir, sizeof dir) != 0) {
    fprintf(stderr, "basil_gateway: no lock directory %s (%s): a predecessor is not ended\n", dir, strerror(errno));
    return;
  }
  snprintf(path, sizeof path, "%s/basil_gateway.%016llx.lock", dir, fnv1a(identity, n));
  fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW, 0600);
  if (fd < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
    fprintf(stderr, "basil_gateway: cannot open %s: %s\n", path, strerror(errno));
    if (fd >= 0) close(fd);
    return;
  }
  until = monotonic_ms() + PREDECESSOR_WAIT_MS;
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      fprintf(stderr, "basil_gateway: cannot lock %s: %s\n", path, strerror(errno));
      close(fd);
      return;
    }
    if (holder == 0) {
      ssize_t r = pread(fd, pidtext, sizeof pidtext - 1, 0);
      pidtext[r > 0 ? r : 0] = '\0';
      holder = (pid_t)strtol(pidtext, NULL, 10);
      if (holder > 1 && holder != getpid()) kill(holder, SIGTERM);
    }
    if (monotonic_ms() >= until) {
      if (sent_kill || holder <= 1) {
        fprintf(stderr, "basil_gateway: the helper holding %s (pid %ld) does not end\n", path, (long)holder);
        close(fd);
        return;
      }
      kill(holder, SIGKILL);
      sent_kill = 1;
      until = monotonic_ms() + PREDECESSOR_KILL_MS;
    }
    sleep_ms(20);
  }
  snprintf(pidtext, sizeof pidtext, "%ld\n", (long)getpid());
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pidtext, strlen(pidtext), 0) < 0)
    fprintf(stderr, "basil_gateway: cannot write %s: %s\n", path, strerror(errno));
}

/* ---------------------------------------------------------------- calls */

static size_t running_count(void) {
  size_t i, n = 0;
  for (i = 0; i < MAX_CALLS; i++) n += calls[i].used ? 1 : 0;
  return n;
}

static void release_call(struct call *c) {
  close_fd(&c->in_fd);
  close_fd(&c->out_fd);
  close_fd(&c->err_fd);
  buf_free(&c->out);
  buf_free(&c->err);
  free(c->req);
#ifdef BASIL_GATEWAY_LZ4
  if (c->lz4) LZ4F_freeCompressionContext(c->lz4);
#endif
  memset(c, 0, sizeof *c);
  c->in_fd = c->out_fd = c->err_fd = -1;
}

/* An R frame for a call that never ran: how 2 (could not start), value `e`. */
static void refuse(unsigned long long id, int e, const char *why) {
  char head[MAX_HEADER];
  snprintf(head, sizeof head, "R %llu 2 %d 0 %lu\n", id, e, (unsigned long)strlen(why));
  write_frame(head, NULL, 0, why, strlen(why));
}

/* Runs argv in a process group of its own, with pipes for its three
   standard streams; 0, or the errno of what failed. */
static int spawn_program(char **run, struct call *c) {
  int pin[2], pout[2], perr[2], e, i;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  sigset_t none, dfl;
  if (pipe(pin) != 0) return errno;
  if (pipe(pout) != 0) {
    e = errno;
    close(pin[0]);
    close(pin[1]);
    return e;
  }
  if (pipe(perr) != 0) {
    e = errno;
    close(pin[0]);
    close(pin[1]);
    close(pout[0]);
    close(pout[1]);
    return e;
  }
  for (i = 0; i < 2; i++) {
    fcntl(pin[i], F_SETFD, FD_CLOEXEC);
    fcntl(pout[i], F_SETFD, FD_CLOEXEC);
    fcntl(perr[i], F_SETFD, FD_CLOEXEC);
  }
  sigemptyset(&none);
  sigemptyset(&dfl);
  sigaddset(&dfl, SIGPIPE);
  sigaddset(&dfl, SIGCHLD);
  e = posix_spawn_file_actions_init(&fa);
  if (e == 0) {
    if (posix_spawnattr_init(&at) == 0) {
      if ((e = posix_spawn_file_actions_adddup2(&fa, pin[0], 0)) == 0 &&
          (e = posix_spawn_file_actions_adddup2(&fa, pout[1], 1)) == 0 &&
          (e = posix_spawn_file_actions_adddup2(&fa, perr[1], 2)) == 0 &&
          (e = posix_spawnattr_setsigmask(&at, &none)) == 0 && (e = posix_spawnattr_setsigdefault(&at, &dfl)) == 0 &&
          (e = posix_spawnattr_setpgroup(&at, 0)) == 0 &&
          (e = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) ==
              0)
        e = posix_spawn(&c->pid, run[0], &fa, &at, run, environ);
      posix_spawnattr_destroy(&at);
    } else {
      e = ENOMEM;
    }
    posix_spawn_file_actions_destroy(&fa);
  }
  close(pin[0]);
  close(pout[1]);
  close(perr[1]);
  if (e != 0) {
    close(pin[1]);
    close(pout[0]);
    close(perr[0]);
    c->pid = 0;
    return e;
  }
  setpgid(c->pid, c->pid); /* also in the parent: no race with a kill */
  fcntl(pin[1], F_SETFL, fcntl(pin[1], F_GETFL) | O_NONBLOCK);
  fcntl(pout[0], F_SETFL, fcntl(pout[0], F_GETFL) | O_NONBLOCK);
  fcntl(perr[0], F_SETFL, fcntl(perr[0], F_GETFL) | O_NONBLOCK);
  c->in_fd = pin[1];
  c->out_fd = pout[0];
  c->err_fd = perr[0];
  return 0;
}

/* Writes what apbasil's stdin takes of the request, and closes it once the
   request is all written or the pipe broke. */
static void feed_stdin(struct call *c) {
  if (c->req_off < c->req_len) {
    ssize_t w = write(c->in_fd, c->req + c->req_off, c->req_len - c->req_off);
    if (w > 0) c->req_off += (size_t)w;
    if (w < 0 && errno != EAGAIN && errno != EINTR) c->req_off = c->req_len;
  }
  if (c->req_off == c->req_len) close_fd(&c->in_fd);
}

static void start_call(struct pending *p) {
  struct call *c = NULL;
  size_t i;
  int e;
  for (i = 0; i < MAX_CALLS && !c; i++)
    if (!calls[i].used) c = &calls[i];
  if (!c) fatal("no free call slot");
  memset(c, 0, sizeof *c);
  c->used = 1;
  c->id = p->id;
  c->req = p->req;
  c->req_len = p->len;
  c->in_fd = c->out_fd = c->err_fd = -1;
  if (p->signal) {
    snprintf(apkill_signal_word, sizeof apkill_signal_word, "-%d", p->signal);
    snprintf(apkill_apid_word, sizeof apkill_apid_word, "%llu", p->apid);
    e = apkill_argv ? spawn_program(apkill_argv, c) : ENOENT;
  } else {
    e = spawn_program(apbasil_argv, c);
  }
  if (e != 0) {
    release_call(c);
    refuse(p->id, e, p->signal && !apkill_argv ? "no apkill: the helper was started without --apkill" : strerror(e));
    return;
  }
  feed_stdin(c);
#ifdef BASIL_GATEWAY_LZ4
  if (compress_out) {
    size_t r;
    if (LZ4F_isError(LZ4F_createCompressionContext(&c->lz4, LZ4F_VERSION)) ||
        buf_reserve(&c->out, LZ4F_HEADER_SIZE_MAX) != 0)
      fatal("out of memory");
    r = LZ4F_compressBegin(c->lz4, c->out.data, c->out.cap, &lz4_prefs);
    if (LZ4F_isError(r)) fatal(LZ4F_getErrorName(r));
    c->out.len = r;
  }
#endif
}

static void start_queued(void) {
  while (queue_head && running_count() < max_running) {
    struct pending *p = queue_head;
    queue_head = p->next;
    if (!queue_head) queue_tail = NULL;
    start_call(p);
    free(p);
  }
}

static void enqueue(unsigned long long id, char *req, size_t len, int sig, unsigned long long apid) {
  struct pending *p = (struct pending *)calloc(1, sizeof *p);
  if (!p) fatal("out of memory");
  p->id = id;
  p->req = req;
  p->len = len;
  p->signal = sig;
  p->apid = apid;
  if (queue_tail)
    queue_tail->next = p;
  else
    queue_head = p;
  queue_tail = p;
  start_queued();
}

/* Appends n bytes of stdout to c->out, compressed when the call is. */
static void take_stdout(struct call *c, const char *p, size_t n) {
#ifdef BASIL_GATEWAY_LZ4
  if (c->lz4) {
    size_t r;
    if (buf_reserve(&c->out, LZ4F_compressBound(n, &lz4_prefs)) != 0) fatal("out of memory");
    r = n > 0 ? LZ4F_compressUpdate(c->lz4, c->out.data + c->out.len, c->out.cap - c->out.len, p, n, NULL)
              : LZ4F_compressEnd(c->lz4, c->out.data + c->out.len, c->out.cap - c->out.len, NULL);
    if (LZ4F_isError(r)) fatal(LZ4F_getErrorName(r));
    c->out.len += r;
    return;
  }
#endif
  if (n > 0 && buf_reserve(&c->out, n) != 0) fatal("out of memory");
  if (n > 0) memcpy(c->out.data + c->out.len, p, n);
  c->out.len += n;
}

/* The stdout that waits in c->out, in a D frame. */
static void send_data(struct call *c) {
  char head[MAX_HEADER];
  snprintf(head, sizeof head, "D %llu %lu\n", c->id, (unsigned long)c->out.len);
  write_frame(head, c->out.data, c->out.len, NULL, 0);
  c->out.len = c->raw_waiting = 0;
}

/* Reads what fd has now; 0 at its end (the fd is closed), 1 otherwise. */
static int drain(struct call *c, int *fd, int is_out) {
  char chunk[65536];
  for (;;) {
    ssize_t r = read(*fd, chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno == EAGAIN ? 1 : (close_fd(fd), 0);
    if (r == 0) return (close_fd(fd), 0);
    if (!is_out) {
      size_t room = MAX_STDERR - c->err.len, take = (size_t)r < room ? (size_t)r : room;
      if (take > 0 && buf_reserve(&c->err, take) == 0) {
        memcpy(c->err.data + c->err.len, chunk, take);
        c->err.len += take;
      }
      continue;
    }
    if (c->overflow) continue;
    c->raw += (size_t)r;
    if (c->raw > max_output) {
      c->overflow = 1;
      c->out.len = 0;
      kill(-c->pid, SIGKILL);
      continue;
    }
    take_stdout(c, chunk, (size_t)r);
    c->raw_waiting += (size_t)r;
    if (c->out.len >= STREAM_BYTES || c->raw_waiting >= ZSTREAM_BYTES) send_data(c);
  }
}

static void finish_call(struct call *c) {
  char head[MAX_HEADER];
  int how = 0, value = 0;
  if (c->overflow) {
    how = 3;
  } else if (WIFSIGNALED(c->status)) {
    how = 1;
    value = WTERMSIG(c->status);
  } else if (WIFEXITED(c->status)) {
    value = WEXITSTATUS(c->status);
  }
#ifdef BASIL_GATEWAY_LZ4
  if (c->lz4 && !c->overflow) take_stdout(c, NULL, 0);
#endif
  if (c->overflow) c->out.len = 0;
  snprintf(head, sizeof head, "R %llu %d %d %lu %lu\n", c->id, how, value, (unsigned long)c->out.len,
           (unsigned long)c->err.len);
  write_frame(head, c->out.data, c->out.len, c->err.data, c->err.len);
  release_call(c);
}

/* A call whose leader has exited is done once its pipes are read to their
   end; whatever it left running that still holds them is killed. */
static void reap(void) {
  size_t i;
  for (i = 0; i < MAX_CALLS; i++) {
    struct call *c = &calls[i];
    pid_t r;
    if (!c->used || c->pid <= 0) continue;
    do {
      r = waitpid(c->pid, &c->status, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == 0) continue;
    /* All the leader wrote is in the pipes now; what still holds them open
       after that is something it started, which goes with it. */
    close_fd(&c->in_fd);
    if (c->out_fd >= 0) drain(c, &c->out_fd, 1);
    if (c->err_fd >= 0) drain(c, &c->err_fd, 0);
    if (c->out_fd >= 0 || c->err_fd >= 0) kill(-c->pid, SIGKILL);
    c->pid = 0;
    finish_call(c);
  }
}

/* ---------------------------------------------------------------- frames in */

static struct buf in;
static size_t in_off;

/* Numbers of a header after its letter: 1 when all `n` parse. */
static int parse_numbers(const char *s, unsigned long long *v, int n) {
  int i;
  for (i = 0; i < n; i++) {
    char *end;
    while (*s == ' ') s++;
    if (*s < '0' || *s > '9') return 0;
    errno = 0;
    v[i] = strtoull(s, &end, 10);
    if (errno != 0) return 0;
    s = end;
  }
  return *s == '\0';
}

/* Takes every complete frame in `in`. */
static void take_frames(void) {
  for (;;) {
    char line[MAX_HEADER + 1];
    unsigned long long v[3];
    char *nl = (char *)memchr(in.data + in_off, '\n', in.len - in_off);
    size_t hl, body;
    if (!nl) {
      if (in.len - in_off > MAX_HEADER) fatal("frame header too long");
      break;
    }
    hl = (size_t)(nl - (in.data + in_off));
    if (hl > MAX_HEADER) fatal("frame header too long");
    memcpy(line, in.data + in_off, hl);
    line[hl] = '\0';
    body = 0;
    if ((line[0] == 'Q' && parse_numbers(line + 1, v, 2)) || (line[0] == 'I' && parse_numbers(line + 1, v, 1))) {
      body = (size_t)(line[0] == 'Q' ? v[1] : v[0]);
      if (line[0] == 'Q' && v[1] > max_request) fatal("request over the limit (--max-request)");
      if (line[0] == 'I' && v[0] > MAX_IDENTITY) fatal("identity too long");
      if (in.len - in_off - hl - 1 < body) break; /* the body has not all come */
    }
    in_off += hl + 1;
    if (line[0] == 'Q' && body == v[1]) {
      char *req = (char *)malloc(body ? body : 1);
      if (!req) fatal("out of memory");
      memcpy(req, in.data + in_off, body);
      in_off += body;
      enqueue(v[0], req, body, 0, 0);
    } else if (line[0] == 'I' && body == v[0]) {
      end_predecessor(in.data + in_off, body);
      in_off += body;
    } else if (line[0] == 'A') {
      if (!parse_numbers(line + 1, v, 3) || v[1] < 1 || v[1] > 64) fatal("bad apkill header");
      enqueue(v[0], NULL, 0, (int)v[1], v[2]);
    } else if (line[0] == 'K' && parse_numbers(line + 1, v, 1)) {
      size_t i;
      for (i = 0; i < MAX_CALLS; i++)
        if (calls[i].used && calls[i].id == v[0] && calls[i].pid > 0) kill(-calls[i].pid, SIGKILL);
    } else if (line[0] == 'Z') {
#ifdef BASIL_GATEWAY_LZ4
      if (strcmp(line, "Z lz4") != 0) fatal("bad compression header");
      compress_out = 1;
#else
      fatal("compression not built in");
#endif
    } else {
      fatal("bad frame header");
    }
  }
  if (in_off == in.len) in.len = in_off = 0;
}

/* Reads what stdin has; 0 at its end. */
static int read_stdin(void) {
  ssize_t r;
  if (in_off > 0 && in_off == in.len) in.len = in_off = 0;
  if (buf_reserve(&in, 65536) != 0) fatal("out of memory");
  r = read(0, in.data + in.len, in.cap - in.len);
  if (r < 0) return errno == EINTR || errno == EAGAIN;
  if (r == 0) return 0;
  in.len += (size_t)r;
  take_frames();
  return 1;
}

/* ---------------------------------------------------------------- main */

static void usage(void) {
  fprintf(stderr,
          "usage: basil_gateway [--max-running N] [--max-output BYTES] [--max-request BYTES]\n"
          "                     [--apkill /path/to/apkill] [--apkill-arg ARG]... [--lock-dir DIR]\n"
          "                     /path/to/apbasil [ARGS...]\n");
  exit(2);
}

static void parse_args(int argc, char **argv) {
  const char *apkill = NULL;
  char **apkill_args = (char **)calloc((size_t)argc + 1, sizeof *apkill_args);
  size_t n_apkill_args = 0, i;
  int a = 1;
  if (!apkill_args) exit(2);
  for (; a + 1 < argc && strncmp(argv[a], "--", 2) == 0; a += 2) {
    char *end;
    unsigned long long v = strtoull(argv[a + 1], &end, 10);
    int number = *argv[a + 1] != '\0' && *end == '\0' && v > 0;
    if (strcmp(argv[a], "--max-running") == 0 && number && v <= MAX_CALLS)
      max_running = (size_t)v;
    else if (strcmp(argv[a], "--max-output") == 0 && number)
      max_output = (size_t)v;
    else if (strcmp(argv[a], "--max-request") == 0 && number)
      max_request = (size_t)v;
    else if (strcmp(argv[a], "--apkill") == 0)
      apkill = argv[a + 1];
    else if (strcmp(argv[a], "--apkill-arg") == 0)
      apkill_args[n_apkill_args++] = argv[a + 1];
    else if (strcmp(argv[a], "--lock-dir") == 0 && argv[a + 1][0] == '/')
      lock_dir = argv[a + 1];
    else
      usage();
  }
  if (a >= argc || argv[a][0] != '/') usage();
  if (apkill ? apkill[0] != '/' : n_apkill_args > 0) usage();
  apbasil_argv = &argv[a];
  if (apkill) {
    apkill_argv = (char **)calloc(n_apkill_args + 4, sizeof *apkill_argv);
    if (!apkill_argv) exit(2);
    apkill_argv[0] = (char *)apkill;
    for (i = 0; i < n_apkill_args; i++) apkill_argv[i + 1] = apkill_args[i];
    apkill_argv[n_apkill_args + 1] = apkill_signal_word;
    apkill_argv[n_apkill_args + 2] = apkill_apid_word;
  }
  free(apkill_args);
}

/* Descriptors the helper's parent left open (not close-on-exec) are not
   passed on to apbasil. */
static void close_inherited_on_exec(void) {
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  if (!d) return;
  while ((e = readdir(d)) != NULL) {
    int fd = atoi(e->d_name);
    if (fd > 2 && fd != dirfd(d)) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  closedir(d);
}

static void set_up_signals(void) {
  struct sigaction sa;
  int i;
  if (pipe(wake_pipe) != 0) exit(2);
  for (i = 0; i < 2; i++) {
    fcntl(wake_pipe[i], F_SETFD, FD_CLOEXEC);
    fcntl(wake_pipe[i], F_SETFL, O_NONBLOCK);
  }
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_signal;
  sigaction(SIGCHLD, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  sa.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &sa, NULL);
}

/* One wait for something to do, and doing it; 0 when the helper ends:
   stdin at its end, stdout hung up, or a stop signal. */
static int step(void) {
  struct pollfd p[3 + 3 * MAX_CALLS];
  struct call *owner[3 + 3 * MAX_CALLS];
  int n = 3, i, waiting = 0, ready;
  size_t k;
  p[0].fd = 0;
  p[0].events = POLLIN;
  p[1].fd = 1;
  p[1].events = 0; /* POLLERR or POLLHUP only: the session is gone */
  p[2].fd = wake_pipe[0];
  p[2].events = POLLIN;
  for (k = 0; k < MAX_CALLS; k++) {
    struct call *c = &calls[k];
    if (!c->used) continue;
    if (c->in_fd >= 0) owner[n] = c, p[n].fd = c->in_fd, p[n++].events = POLLOUT;
    if (c->out_fd >= 0) owner[n] = c, p[n].fd = c->out_fd, p[n++].events = POLLIN;
    if (c->err_fd >= 0) owner[n] = c, p[n].fd = c->err_fd, p[n++].events = POLLIN;
    waiting |= c->raw_waiting > 0;
  }
  ready = poll(p, (nfds_t)n, waiting ? STREAM_WAIT_MS : -1);
  if (ready < 0 && errno != EINTR) fatal("poll failed");
  for (k = 0; ready == 0 && k < MAX_CALLS; k++) /* apbasil paused: what it wrote leaves */
    if (calls[k].used && calls[k].raw_waiting > 0 && !calls[k].overflow) send_data(&calls[k]);
  if (p[1].revents & (POLLERR | POLLHUP | POLLNVAL)) return 0;
  if (p[2].revents & POLLIN) {
    char drop[64];
    while (read(wake_pipe[0], drop, sizeof drop) > 0) {
    }
  }
  if (stop_requested) return 0;
  for (i = 3; i < n; i++) {
    struct call *c = owner[i];
    if (!p[i].revents || !c->used) continue;
    if (p[i].fd == c->in_fd)
      feed_stdin(c);
    else if (p[i].fd == c->out_fd)
      drain(c, &c->out_fd, 1);
    else if (p[i].fd == c->err_fd)
      drain(c, &c->err_fd, 0);
  }
  if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) && !read_stdin()) return 0;
  reap();
  start_queued();
  return 1;
}

int main(int argc, char **argv) {
  char hello[64];
  parse_args(argc, argv);
  close_inherited_on_exec();
  set_up_signals();
#ifdef BASIL_GATEWAY_LZ4
  memset(&lz4_prefs, 0, sizeof lz4_prefs);
  lz4_prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  lz4_prefs.frameInfo.blockMode = LZ4F_blockLinked;
  lz4_prefs.autoFlush = 1;
  snprintf(hello, sizeof hello, "BASIL-GATEWAY %d lz4\n", VERSION);
#else
  snprintf(hello, sizeof hello, "BASIL-GATEWAY %d\n", VERSION);
#endif
  write_frame(hello, NULL, 0, NULL, 0);
  while (step()) {
  }
  kill_all();
  return 0;
}
