/*
 * basil_gateway: the remote half of basild's ssh conduit in gateway mode.
 *
 * Runs on the main system's login node, started once per ssh session by basild (or by the
 * forced command of a restricted key). Reads framed requests on stdin, runs apbasil for each
 * (several at once, each in a process group of its own, never through a shell) and writes
 * framed answers on stdout; apkill likewise. It needs only the C library and C99:
 *   cc -std=c99 -O2 -o basil_gateway basil_gateway.c
 * or, with liblz4, with the answers compressed on their way (Z below):
 *   cc -std=c99 -O2 -DBASIL_GATEWAY_LZ4 -o basil_gateway basil_gateway.c -llz4
 *
 * Frames (basild/conduit/frames.h), numbers unsigned decimal:
 *   out, once: "BASIL-GATEWAY 6[ lz4]\n"
 *   in:  "I <len>\n" <identity>   the conduit's; a running helper of the same identity ends
 *   in:  "Q <id> <len>\n" <req>   run apbasil, the request on its stdin
 *   in:  "A <id> <sig> <apid>\n"  run APKILL [ARGS...] -<sig> <apid> (sig 1 to 64)
 *   in:  "K <id>\n"               kill that call's process group (queued: answered killed)
 *   in:  "Z lz4\n"                from now on each call's stdout is one LZ4 frame
 *   out: "D <id> <len>\n" <bytes> a piece of a long answer's stdout, as it comes
 *   out: "R <id> <how> <value> <outlen> <errlen>\n" <stdout> <stderr>   a call's end; how:
 *                                0 exited (value: code), 1 killed (signal), 2 not started
 *                                (errno), 3 stdout over --max-output
 *   out: "E <len>\n" <message>    a fatal protocol error; the helper then exits 1
 * Versions 3 to 5 also had a flow window, credits, a spare apbasil and early answers.
 *
 * The end of stdin, stdout hung up (the session gone), SIGTERM, SIGINT or SIGHUP kill every
 * call's process group and end the helper. A helper given an identity (I) held by a running
 * helper ends that one first (SIGTERM, then SIGKILL), through a lock named after the identity
 * in --lock-dir (default /tmp/basil_gateway.<uid>, 0700, the user's alone).
 *
 * Usage: basil_gateway [--max-running N] [--max-output BYTES] [--max-request BYTES]
 *          [--apkill APKILL] [--apkill-arg ARG]... [--lock-dir DIR] APBASIL [ARGS...]
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

int flock(int fd, int operation); /* outside POSIX 2008, in every Linux C library */
int pipe2(int fd[2], int flags);

#ifdef BASIL_GATEWAY_LZ4
#define HELLO "BASIL-GATEWAY 6 lz4\n"
#else
#define HELLO "BASIL-GATEWAY 6\n"
#endif
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
  int used, queued; /* queued: waits for one of the max_running places */
  unsigned long long id, seq, apid;
  int signal; /* an apkill of apid with this signal; 0: apbasil */
  pid_t pid; /* the process group's leader; 0 once reaped */
  int in_fd, out_fd, err_fd;
  char *req; /* the request, written to apbasil's stdin as it takes it */
  size_t req_len, req_off;
  struct buf out, err;
  size_t raw;   /* stdout bytes read (before compression) */
  size_t raw_waiting; /* of those, the ones in out (not yet in a D frame) */
  int status;   /* waitpid's, once reaped */
  int overflow; /* stdout over max_output: killed */
#ifdef BASIL_GATEWAY_LZ4
  LZ4F_cctx *lz4; /* stdout's LZ4 frame (Z frame); NULL: sent as it is */
#endif
};

extern char **environ;

static struct call calls[MAX_CALLS];
static unsigned long long next_seq;
static size_t max_running = 4, max_output = 256u << 20, max_request = 1u << 20;
static char **apbasil_argv, **apkill_argv;
static char apkill_signal_word[8], apkill_apid_word[24];
static const char *lock_dir;
static int wake_pipe[2] = {-1, -1}; /* SIGCHLD and the stop signals write a byte */
static volatile sig_atomic_t stop_requested;
#ifdef BASIL_GATEWAY_LZ4
static int compress_out; /* Z frame seen: calls started from now on compress */
static LZ4F_preferences_t lz4_prefs = {.frameInfo = {.blockSizeID = LZ4F_max64KB, .blockMode = LZ4F_blockLinked},
                                         .autoFlush = 1};
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

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

static long long monotonic_ms(void) {
  struct timespec t;
  return clock_gettime(CLOCK_MONOTONIC, &t) != 0 ? 0 : (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Kills every call's process group and reaps the leaders: nothing the
   helper started outlives it. */
static void kill_all(void) {
  size_t i;
  for (i = 0; i < MAX_CALLS; i++) {
    if (!calls[i].used || calls[i].pid <= 0) continue;
    kill(-calls[i].pid, SIGKILL);
    while (waitpid(calls[i].pid, &calls[i].status, 0) < 0 && errno == EINTR) continue;
    calls[i].pid = 0;
  }
}

/* A frame, header and two bodies, in one writev (a small answer leaves in
   one ssh packet). A write error means the session is gone. */
static void write_frame(const char *head, const char *p1, size_t n1, const char *p2, size_t n2) {
  struct iovec iov[3];
  size_t k;
  iov[0].iov_base = (char *)head, iov[0].iov_len = strlen(head);
  iov[1].iov_base = (char *)p1, iov[1].iov_len = n1;
  iov[2].iov_base = (char *)p2, iov[2].iov_len = n2;
  while (iov[0].iov_len + iov[1].iov_len + iov[2].iov_len > 0) {
    ssize_t w = writev(1, iov, 3);
    size_t left = w > 0 ? (size_t)w : 0;
    if (w < 0 && errno != EINTR) {
      kill_all();
      exit(0);
    }
    for (k = 0; k < 3; k++) {
      size_t take = left < iov[k].iov_len ? left : iov[k].iov_len;
      iov[k].iov_base = (char *)iov[k].iov_base + take;
      iov[k].iov_len -= take;
      left -= take;
    }
  }
}

static void fatal(const char *msg) {
  char head[MAX_HEADER];
  snprintf(head, sizeof head, "E %lu\n", (unsigned long)strlen(msg));
  write_frame(head, msg, strlen(msg), NULL, 0);
  kill_all();
  exit(1);
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

/* Takes the lock of `identity` in the lock directory (--lock-dir, or
   /tmp/basil_gateway.<uid>), which must be ours alone: no one else may plant
   a lock that names a pid to kill. A helper holding the lock is asked to end
   (SIGTERM, then SIGKILL) and waited for; the lock stays held, open, until
   this helper exits. Trouble is said on stderr and is not fatal: the helper
   runs its calls without the lock. */
static void end_predecessor(const char *identity, size_t n) {
  char dir[PATH_MAX], path[PATH_MAX + 64], pidtext[32];
  const char *trouble = NULL;
  long long start = monotonic_ms(), waited;
  struct stat st;
  pid_t holder = 0;
  int fd = -1;
  if (lock_dir)
    snprintf(dir, sizeof dir, "%s", lock_dir);
  else
    snprintf(dir, sizeof dir, "/tmp/basil_gateway.%lu", (unsigned long)getuid());
  snprintf(path, sizeof path, "%s/basil_gateway.%016llx.lock", dir, fnv1a(identity, n));
  if ((mkdir(dir, 0700) != 0 && errno != EEXIST) || lstat(dir, &st) != 0)
    trouble = strerror(errno);
  else if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 022) != 0)
    trouble = "its directory is not this user's alone";
  else if ((fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
    trouble = strerror(errno);
  while (!trouble && flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      trouble = strerror(errno);
      break;
    }
    if (holder == 0) {
      ssize_t r = pread(fd, pidtext, sizeof pidtext - 1, 0);
      pidtext[r > 0 ? r : 0] = '\0';
      holder = (pid_t)strtol(pidtext, NULL, 10);
      if (holder > 1 && holder != getpid()) kill(holder, SIGTERM);
    }
    waited = monotonic_ms() - start;
    if (waited >= PREDECESSOR_WAIT_MS + PREDECESSOR_KILL_MS || (waited >= PREDECESSOR_WAIT_MS && holder <= 1))
      trouble = "the helper holding it does not end";
    else if (waited >= PREDECESSOR_WAIT_MS)
      kill(holder, SIGKILL);
    poll(NULL, 0, 20);
  }
  if (trouble) {
    fprintf(stderr, "basil_gateway: lock %s: %s; no predecessor is ended\n", path, trouble);
    if (fd >= 0) close(fd);
    return;
  }
  snprintf(pidtext, sizeof pidtext, "%ld\n", (long)getpid());
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pidtext, strlen(pidtext), 0) < 0)
    fprintf(stderr, "basil_gateway: cannot write %s: %s\n", path, strerror(errno));
}

/* ---------------------------------------------------------------- calls */


static void release_call(struct call *c) {
  close_fd(&c->in_fd);
  close_fd(&c->out_fd);
  close_fd(&c->err_fd);
  free(c->out.data);
  free(c->err.data);
  free(c->req);
#ifdef BASIL_GATEWAY_LZ4
  if (c->lz4) LZ4F_freeCompressionContext(c->lz4);
#endif
  memset(c, 0, sizeof *c);
  c->in_fd = c->out_fd = c->err_fd = -1;
}

/* An R frame for a call that never ran: how 1 (killed) or 2 (not started). */
static void refuse(struct call *c, int how, int value, const char *why) {
  char head[MAX_HEADER];
  snprintf(head, sizeof head, "R %llu %d %d 0 %lu\n", c->id, how, value, (unsigned long)strlen(why));
  write_frame(head, NULL, 0, why, strlen(why));
  release_call(c);
}

/* Runs argv in a process group of its own, with pipes for its three
   standard streams; 0, or the errno of what failed. */
static int spawn_program(char **run, struct call *c) {
  int p[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}}, e = 0, i;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  sigset_t none, dfl;
  for (i = 0; i < 3 && e == 0; i++)
    if (pipe2(p[i], O_CLOEXEC) != 0) e = errno;
  sigemptyset(&none);
  sigemptyset(&dfl);
  sigaddset(&dfl, SIGPIPE);
  sigaddset(&dfl, SIGCHLD);
  if (e == 0 && (e = posix_spawn_file_actions_init(&fa)) == 0) {
    if ((e = posix_spawnattr_init(&at)) == 0) {
      if (posix_spawn_file_actions_adddup2(&fa, p[0][0], 0) || posix_spawn_file_actions_adddup2(&fa, p[1][1], 1) ||
          posix_spawn_file_actions_adddup2(&fa, p[2][1], 2) || posix_spawnattr_setsigmask(&at, &none) ||
          posix_spawnattr_setsigdefault(&at, &dfl) || posix_spawnattr_setpgroup(&at, 0) ||
          posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        e = ENOMEM;
      else
        e = posix_spawn(&c->pid, run[0], &fa, &at, run, environ);
      posix_spawnattr_destroy(&at);
    }
    posix_spawn_file_actions_destroy(&fa);
  }
  for (i = 0; i < 3; i++) close_fd(&p[i][i != 0]); /* the child's ends */
  if (e != 0) {
    for (i = 0; i < 3; i++) close_fd(&p[i][i == 0]);
    c->pid = 0;
    return e;
  }
  setpgid(c->pid, c->pid); /* also in the parent: no race with a kill */
  /* Our ends (stdin's write end, stdout's and stderr's read ends) never block. */
  for (i = 0; i < 3; i++) fcntl(p[i][i == 0], F_SETFL, fcntl(p[i][i == 0], F_GETFL) | O_NONBLOCK);
  c->in_fd = p[0][1];
  c->out_fd = p[1][0];
  c->err_fd = p[2][0];
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

static void start_call(struct call *c) {
  int e;
  c->queued = 0;
  snprintf(apkill_signal_word, sizeof apkill_signal_word, "-%d", c->signal);
  snprintf(apkill_apid_word, sizeof apkill_apid_word, "%llu", c->apid);
  e = !c->signal ? spawn_program(apbasil_argv, c) : apkill_argv ? spawn_program(apkill_argv, c) : ENOENT;
  if (e != 0) {
    refuse(c, 2, e, c->signal && !apkill_argv ? "no apkill: the helper was started without --apkill" : strerror(e));
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

/* Starts the oldest queued calls while fewer than max_running run. */
static void start_queued(void) {
  for (;;) {
    struct call *next = NULL;
    size_t i, running = 0;
    for (i = 0; i < MAX_CALLS; i++) {
      running += calls[i].used && !calls[i].queued;
      if (calls[i].queued && (!next || calls[i].seq < next->seq)) next = &calls[i];
    }
    if (!next || running >= max_running) return;
    start_call(next);
  }
}

static void enqueue(unsigned long long id, char *req, size_t len, int sig, unsigned long long apid) {
  struct call *c = NULL;
  size_t i;
  for (i = 0; i < MAX_CALLS && !c; i++)
    if (!calls[i].used) c = &calls[i];
  if (!c) fatal("more calls than the helper holds (256)");
  memset(c, 0, sizeof *c);
  c->used = c->queued = 1;
  c->seq = next_seq++;
  c->id = id, c->req = req, c->req_len = len, c->signal = sig, c->apid = apid;
  c->in_fd = c->out_fd = c->err_fd = -1;
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
  if (c->overflow)
    how = 3;
  else if (WIFSIGNALED(c->status))
    how = 1, value = WTERMSIG(c->status);
  else if (WIFEXITED(c->status))
    value = WEXITSTATUS(c->status);
#ifdef BASIL_GATEWAY_LZ4
  if (c->lz4 && !c->overflow) take_stdout(c, NULL, 0);
#endif
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
      for (i = 0; i < MAX_CALLS; i++) {
        if (!calls[i].used || calls[i].id != v[0]) continue;
        if (calls[i].queued) refuse(&calls[i], 1, SIGKILL, "killed before it started");
        else if (calls[i].pid > 0) kill(-calls[i].pid, SIGKILL);
      }
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

/* The options, then apbasil's argv; apkill's gets "-<signal> <apid>" after its own. */
static void parse_args(int argc, char **argv) {
  int a = 1, n = 1;
  apkill_argv = (char **)calloc((size_t)argc + 4, sizeof *apkill_argv);
  if (!apkill_argv) exit(2);
  for (; a + 1 < argc && strncmp(argv[a], "--", 2) == 0; a += 2) {
    char *end, *v = argv[a + 1];
    unsigned long long x = strtoull(v, &end, 10);
    int number = *v != '\0' && *end == '\0' && x > 0;
    if (strcmp(argv[a], "--max-running") == 0 && number && x <= MAX_CALLS)
      max_running = (size_t)x;
    else if (strcmp(argv[a], "--max-output") == 0 && number)
      max_output = (size_t)x;
    else if (strcmp(argv[a], "--max-request") == 0 && number)
      max_request = (size_t)x;
    else if (strcmp(argv[a], "--apkill") == 0 && v[0] == '/')
      apkill_argv[0] = v;
    else if (strcmp(argv[a], "--apkill-arg") == 0)
      apkill_argv[n++] = v;
    else if (strcmp(argv[a], "--lock-dir") == 0 && v[0] == '/')
      lock_dir = v;
    else
      usage();
  }
  if (a >= argc || argv[a][0] != '/' || (!apkill_argv[0] && n > 1)) usage();
  apbasil_argv = &argv[a];
  apkill_argv[n] = apkill_signal_word;
  apkill_argv[n + 1] = apkill_apid_word;
  if (!apkill_argv[0]) free(apkill_argv), apkill_argv = NULL;
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
  static const int signals[5] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGPIPE};
  struct sigaction sa;
  int i;
  if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) exit(2);
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  for (i = 0; i < 5; i++) {
    sa.sa_handler = signals[i] == SIGPIPE ? SIG_IGN : on_signal;
    sigaction(signals[i], &sa, NULL);
  }
}

/* One wait for something to do, and doing it; 0 when the helper ends:
   stdin at its end, stdout hung up, or a stop signal. */
static int step(void) {
  struct pollfd p[3 + 3 * MAX_CALLS];
  struct call *owner[3 + 3 * MAX_CALLS];
  int n = 3, i, waiting = 0, ready;
  size_t k;
  p[0].fd = 0, p[0].events = POLLIN;
  p[1].fd = 1, p[1].events = 0; /* POLLERR or POLLHUP only: the session is gone */
  p[2].fd = wake_pipe[0], p[2].events = POLLIN;
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
    while (read(wake_pipe[0], drop, sizeof drop) > 0) continue;
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
  parse_args(argc, argv);
  close_inherited_on_exec();
  set_up_signals();
  write_frame(HELLO, NULL, 0, NULL, 0);
  while (step()) continue;
  kill_all();
  return 0;
}
