/*
 * basil_gateway: the remote half of basild's ssh conduit in gateway mode.
 *
 * Runs on the main system's login node, started once per ssh session by
 * basild (or by the forced command of a restricted key). Reads framed BASIL
 * requests on stdin, runs apbasil for each (several at once, each in its
 * own process group, the request on its stdin, never through a shell), and
 * writes framed answers on stdout. It runs apkill the same way (stdin
 * empty) when asked to signal an application.
 *
 * Build it on the main system, with its own compiler (it needs only the C
 * library and C99; apbasil_proxy(8), "The gateway helper"):
 *   cc -std=c99 -O2 -o basil_gateway basil_gateway.c
 *   install -m 755 basil_gateway /usr/local/libexec/basil_gateway
 * or, where the system has liblz4 (its headers, lz4-devel on SLES), with
 * the answers compressed on their way (the Z frame below):
 *   cc -std=c99 -O2 -DBASIL_GATEWAY_LZ4 -o basil_gateway basil_gateway.c -llz4
 *
 * The frames (see basild/conduit/frames.h):
 *
 *   out, once:  "BASIL-GATEWAY 5 lz4\n"                (" lz4" when built with BASIL_GATEWAY_LZ4)
 *   in:         "Q <id> <len>\n" <request>           run a request
 *   in:         "A <id> <signal> <apid>\n"            run APKILL [ARGS...] -<signal> <apid>
 *               (signal 1 to 64, apid decimal digits; answered how 2, value
 *               ENOENT, when the helper was started without --apkill)
 *   in:         "K <id>\n"                            kill that call's process group
 *   in:         "W <bytes>\n"                         from now on, a call's D frames not yet
 *               credited stay under <bytes> (its stdout is not read meanwhile)
 *   in:         "C <id> <bytes>\n"                    <bytes> more of that call's D frames arrived
 *   in:         "S <n>\n"                             from now on, keep <n> (0 or 1) apbasil
 *               started ahead, waiting on its stdin for the next request
 *   in:         "Z lz4\n"                             from now on, each call's stdout (its D
 *               frames' bytes and the R frame's <stdout>, together) is one LZ4
 *               frame; only to a helper whose greeting lists lz4
 *   out:        "D <id> <len>\n" <stdout bytes>        a piece of an answer's stdout, as it comes: a long
 *               answer's first once STREAM_BYTES wait, then what each read brings
 *               (compressed: in frames of ZSTREAM_BYTES of stdout, see below);
 *               a short answer's at once when it may be whole (its last byte, blanks
 *               aside, is '>'), before apbasil has exited, then what each read brings
 *   out:        "R <id> <how> <value> <outlen> <errlen>\n" <stdout> <stderr>
 *               the end of a call, with the rest of its stdout (all of it
 *               for an answer under STREAM_BYTES, which leaves in one write)
 *               how: 0 exited (value: exit code), 1 killed (value: signal),
 *                    2 the program could not be started (value: errno), 3 output over the limit
 *   out:        "E <len>\n" <message>                 fatal protocol error, then exit 1
 *
 * Version 2 added the D frames: a long answer (an INVENTORY of a large
 * machine) travels while apbasil still writes it. Version 3 added the flow
 * window and credits: without them a long answer filled sshd's buffers and
 * the channel window (megabytes) ahead of every short answer of another
 * call; with them at most the window of it is on its way at any moment, so a
 * short answer waits behind that much only. A conduit that sends no W frame
 * gets version 2's behaviour; basild reads version 1 and 2 helpers too.
 * Version 4 added the S frame: a spare apbasil takes the next request, so
 * that a call does not wait for apbasil to be spawned and to start
 * (apbasil reads its request to end of file before it acts). The next
 * spare starts as soon as a call has taken the one before, while that
 * call's apbasil works, so that a call close behind (a CONFIRM just after
 * its RESERVE) finds one too; after a call that found none, SPARE_DELAY_MS
 * after its answer has left. A spare older than SPARE_MAX_AGE
 * seconds is not used (an apbasil replaced on disk meanwhile is not run
 * from its old copy): it is killed and the call spawns its own. A spare is
 * killed before its stdin is closed, so it never sees an empty request,
 * unless the helper itself is killed with SIGKILL: the spare then reads an
 * empty request, fails to parse it and exits.
 * Version 5 lists what the helper was built with after its version (so far
 * only "lz4") and added the Z frame: an INVENTORY of a large machine is
 * highly repetitive XML (8.9 MB of an emulated 2256-node XC30 become 75 KB
 * in LZ4, for some 7 ms of CPU), so the ssh channel, sshd and the
 * conduit carry a fraction of it. Stdout is compressed as it is read, a D
 * frame leaves once ZSTREAM_BYTES (1 MiB) of stdout went into it or
 * STREAM_BYTES of compressed bytes wait, and the limits (--max-output)
 * count stdout before compression. (Until 1 MiB frames, a frame left at
 * each STREAM_BYTES of stdout; no conduit depends on a frame's size.)
 * Since the same version a short answer that may be whole (its last byte,
 * blanks aside, is '>') leaves in a D frame as soon as it is read, not
 * after apbasil has exited: basild, which knows a whole BASIL document
 * when it sees one, answers its caller then, and the R frame with the exit
 * status follows. apbasil's exit (its memory given back, its pipes closed,
 * SIGCHLD, the reaping) is then off the caller's way. A conduit that does
 * not look takes the D frame as any other and answers at the R frame. The
 * R frame of such a call, when no stdout followed that D frame, is held
 * back HOLD_MS, or until another frame leaves, so that it does not take a
 * CPU (here, in sshd, in the conduit) from the answer still on its way to
 * the caller.
 *
 * End of file on stdin: no more requests; the calls running and queued
 * are finished and answered, then the helper exits 0. A write error on
 * stdout (the session is gone) kills every running apbasil and exits 0.
 *
 * Needs only the C library; builds with an old system compiler:
 *   cc -std=c99 -O2 -o basil_gateway basil_gateway.c
 *
 * Usage: basil_gateway [--max-running N] [--max-output BYTES]
 *                      [--max-request BYTES] [--apkill APKILL]
 *                      [--apkill-arg ARG]... APBASIL [ARGS...]
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

#define MAX_HEADER 128
#define MAX_STDERR (64 * 1024)
#define MAX_SLOTS 256
/* Stdout is sent on as a D frame once this much of it waits. */
#define STREAM_BYTES (64 * 1024)
/* Compressed (Z frame), once this much of stdout went into the frame, or
   STREAM_BYTES of compressed bytes wait, whichever comes first. XML
   compresses some hundredfold, so that STREAM_BYTES of stdout made frames
   of a few hundred bytes: 137 for an 8.9-MB INVENTORY, each a packet
   through sshd and a wake-up of the conduit and of basild. In 1-MiB
   frames the same answer is 9, and sshd, the conduit and this helper spend
   some 5 ms of CPU less on it (measured); on a machine with few cores that
   CPU is what short calls beside the INVENTORY wait for. What a long
   answer's writer wrote before a pause still leaves STREAM_WAIT_MS after
   it was read. */
#define ZSTREAM_BYTES (1024 * 1024)
#define STREAM_WAIT_MS 5

struct buf {
  char *data;
  size_t len, cap;
};

struct call {
  int used;
  unsigned long long id;
  pid_t pid;
  int in_fd, out_fd, err_fd;
  char *req; /* request bytes still to write */
  size_t req_len, req_off;
  struct buf out, err;
  size_t streamed; /* stdout bytes already sent in D frames */
  size_t credited; /* of those, the ones the conduit said arrived (W/C frames) */
  int overflow, killed_for_overflow, spawn_errno, exited;
  int status;
  int signal; /* an apkill of apid with this signal; 0: apbasil */
  unsigned long long apid;
  size_t raw;         /* stdout bytes read (before compression) */
  size_t raw_waiting; /* of those, the ones whose bytes wait in out */
  char last;          /* the last byte of stdout so far that is not a blank; 0: none yet */
  int early;          /* its whole answer left before its exit (see the D frame): its R frame is held */
  long long wait_due; /* compressed and long: when what waits in out leaves, should no more come
                         (CLOCK_MONOTONIC milliseconds); -1: nothing waits */
#ifdef BASIL_GATEWAY_LZ4
  LZ4F_cctx *lz4; /* stdout's LZ4 frame (Z frame); NULL: sent as it is */
#endif
};

extern char **environ;

static struct call slots[MAX_SLOTS];
static size_t max_running = 4;
static size_t max_output = 256u << 20;
static size_t max_request = 1u << 20;
/* The flow window of the W frame; 0: none (no W frame yet). */
static size_t flow_window;
#ifdef BASIL_GATEWAY_LZ4
/* Z frame seen: calls started from then on compress their stdout. */
static int compress_out;
#endif
static char **apbasil_argv;
/* APKILL [ARGS...] then the two words below, written just before
   posix_spawn (which returns once the child has exec'd), then NULL; NULL
   without --apkill. */
static char **apkill_argv;
static char apkill_signal_word[8], apkill_apid_word[24];

/* Requests read but not started yet (over max_running). */
struct pending {
  unsigned long long id;
  char *req;
  size_t len;
  int signal; /* as in struct call */
  unsigned long long apid;
  struct pending *next;
};
static struct pending *queue_head, *queue_tail;
static size_t queue_len;

/* The apbasil started ahead (S frame): pid 0 when there is none. */
#define SPARE_MAX_AGE 30
static struct {
  pid_t pid;
  int in_fd, out_fd, err_fd;
  time_t started; /* CLOCK_MONOTONIC seconds */
} spare = {0, -1, -1, -1, 0};
static int spare_wanted;
/* The next spare starts when a call takes the spare (start_call), while
   that call's apbasil works on one CPU. With none to take, it starts
   SPARE_DELAY_MS after an answer has left, not at once: its start (exec,
   loading) would take a CPU from that answer's way back (sshd, the
   conduit, its caller); a request that comes sooner starts its own
   apbasil. spare_due: CLOCK_MONOTONIC milliseconds at which the next spare
   is started, -1 when none is due. */
#define SPARE_DELAY_MS 3
static long long spare_due = -1;
/* No spare once the conduit has closed stdin: no request comes any more. */
static int stdin_open = 1;

static void fatal(const char *msg);

/* R frames of calls answered early (struct call's early), held back until
   HOLD_MS after the first of them, or until another frame leaves. */
#define HOLD_MS 2
static struct buf held;
static long long held_due = -1;

/* Room for n more bytes at b->data + b->len. */
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

/* Appends n bytes at p (p may be NULL when n is 0: an empty buffer's data). */
static int buf_append(struct buf *b, const char *p, size_t n) {
  if (n == 0) return 0;
  if (buf_reserve(b, n) != 0) return -1;
  memcpy(b->data + b->len, p, n);
  b->len += n;
  return 0;
}

#ifdef BASIL_GATEWAY_LZ4

/* LZ4 frames with linked 64-KiB blocks (a block refers back to the one
   before it), flushed on every update: what was read is in out at once.
   Set field by field (the structure grew between lz4 releases). */
static LZ4F_preferences_t lz4_prefs;

static void lz4_prefs_init(void) {
  memset(&lz4_prefs, 0, sizeof lz4_prefs);
  lz4_prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  lz4_prefs.frameInfo.blockMode = LZ4F_blockLinked;
  lz4_prefs.autoFlush = 1;
}

/* Appends to c->out what compressing n bytes (n == 0: the frame's end) gives. */
static void compress_stdout(struct call *c, const char *p, size_t n) {
  size_t r;
  if (buf_reserve(&c->out, LZ4F_compressBound(n, &lz4_prefs)) != 0) fatal("out of memory");
  if (n > 0)
    r = LZ4F_compressUpdate(c->lz4, c->out.data + c->out.len, c->out.cap - c->out.len, p, n, NULL);
  else
    r = LZ4F_compressEnd(c->lz4, c->out.data + c->out.len, c->out.cap - c->out.len, NULL);
  if (LZ4F_isError(r)) fatal(LZ4F_getErrorName(r));
  c->out.len += r;
}
#endif

static void buf_free(struct buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
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

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

static time_t monotonic_seconds(void) {
  struct timespec t;
  if (clock_gettime(CLOCK_MONOTONIC, &t) != 0) return 0;
  return t.tv_sec;
}

static long long monotonic_ms(void) {
  struct timespec t;
  if (clock_gettime(CLOCK_MONOTONIC, &t) != 0) return 0;
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Kills the spare, if any (before its stdin closes: it never reads an
   empty request), and reaps it unless `reaped`. */
static void drop_spare(int reaped) {
  if (spare.pid <= 0) return;
  if (!reaped) {
    int status;
    kill(-spare.pid, SIGKILL);
    while (waitpid(spare.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  close_fd(&spare.in_fd);
  close_fd(&spare.out_fd);
  close_fd(&spare.err_fd);
  spare.pid = 0;
}

static void kill_all(void) {
  size_t i;
  drop_spare(0);
  for (i = 0; i < MAX_SLOTS; i++) {
    if (slots[i].used && slots[i].pid > 0 && !slots[i].exited) {
      kill(-slots[i].pid, SIGKILL);
      while (waitpid(slots[i].pid, &slots[i].status, 0) < 0 && errno == EINTR) {
      }
      slots[i].exited = 1;
    }
  }
}

static void fatal(const char *msg) {
  char head[MAX_HEADER];
  size_t n = strlen(msg);
  snprintf(head, sizeof head, "E %lu\n", (unsigned long)n);
  write_all(1, head, strlen(head));
  write_all(1, msg, n);
  kill_all();
  exit(1);
}

static size_t running_count(void) {
  size_t i, n = 0;
  for (i = 0; i < MAX_SLOTS; i++)
    if (slots[i].used) n++;
  return n;
}

/* One frame, header and body, after the R frames held back, in one writev:
   a small answer leaves in one ssh packet (sshd does not set TCP_NODELAY
   for a session without a terminal). A write error means the session is
   gone. */
static void write_frame(const char *head, const char *p1, size_t n1, const char *p2, size_t n2) {
  struct iovec iov[4];
  size_t total, done = 0;
  iov[0].iov_base = held.data;
  iov[0].iov_len = held.len;
  iov[1].iov_base = (char *)head;
  iov[1].iov_len = strlen(head);
  iov[2].iov_base = (char *)p1;
  iov[2].iov_len = n1;
  iov[3].iov_base = (char *)p2;
  iov[3].iov_len = n2;
  total = iov[0].iov_len + iov[1].iov_len + iov[2].iov_len + iov[3].iov_len;
  held.len = 0;
  held_due = -1;
  while (done < total) {
    ssize_t w = writev(1, iov, 4);
    size_t k, left;
    if (w < 0) {
      if (errno == EINTR) continue;
      kill_all();
      exit(0); /* the session is gone */
    }
    done += (size_t)w;
    left = (size_t)w;
    for (k = 0; k < 4; k++) {
      size_t take = left < iov[k].iov_len ? left : iov[k].iov_len;
      iov[k].iov_base = (char *)iov[k].iov_base + take;
      iov[k].iov_len -= take;
      left -= take;
    }
  }
}

static void send_answer(struct call *c) {
  char head[MAX_HEADER];
  int how = 0, value = 0;
  if (c->spawn_errno) {
    how = 2;
    value = c->spawn_errno;
  } else if (c->overflow) {
    how = 3;
  } else if (WIFSIGNALED(c->status)) {
    how = 1;
    value = WTERMSIG(c->status);
  } else if (WIFEXITED(c->status)) {
    value = WEXITSTATUS(c->status);
  }
  if (c->overflow) c->out.len = 0;
#ifdef BASIL_GATEWAY_LZ4
  if (c->lz4 && !c->overflow) compress_stdout(c, NULL, 0);
#endif
  snprintf(head, sizeof head, "R %llu %d %d %lu %lu\n", c->id, how, value, (unsigned long)c->out.len,
           (unsigned long)c->err.len);
  if (!c->early) {
    write_frame(head, c->out.data, c->out.len, c->err.data, c->err.len);
    return;
  }
  /* Its caller has the answer: the R frame waits, so that it does not take
     a CPU (here, in sshd, in the conduit) from that answer's way. */
  if (buf_append(&held, head, strlen(head)) != 0 || buf_append(&held, c->out.data, c->out.len) != 0 ||
      buf_append(&held, c->err.data, c->err.len) != 0)
    fatal("out of memory");
  if (held_due < 0) held_due = monotonic_ms() + HOLD_MS;
}

/* Sends the R frames held back. */
static void send_held(void) {
  if (held.len > 0) write_frame("", NULL, 0, NULL, 0);
}

/* Keeps the last byte of call `c`'s stdout that is not a blank: a short
   answer ending in '>' may be whole, and leaves at once (see the D frame). */
static void note_last_byte(struct call *c, const char *p, size_t n) {
  while (n > 0) {
    char b = p[--n];
    if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
      c->last = b;
      return;
    }
  }
}

/* A poll timeout (-1: none) shortened, when need be, so that poll returns
   by `due` (CLOCK_MONOTONIC milliseconds; -1: nothing due). */
static int until_due(int timeout, long long due) {
  long long wait;
  if (due < 0) return timeout;
  wait = due - monotonic_ms();
  if (wait < 0) wait = 0;
  return timeout < 0 || wait < timeout ? (int)wait : timeout;
}

/* Whether c's stdout is compressed (the Z frame). */
static int compressed(const struct call *c) {
#ifdef BASIL_GATEWAY_LZ4
  return c->lz4 != NULL;
#else
  (void)c;
  return 0;
#endif
}

/* Whether the stdout waiting in `c` makes a D frame now. */
static int frame_due(const struct call *c) {
  if (compressed(c)) return c->raw_waiting >= ZSTREAM_BYTES || c->out.len >= STREAM_BYTES;
  return c->raw_waiting >= STREAM_BYTES;
}

/* Sends the stdout waiting in `c` as a D frame. */
static void send_data(struct call *c) {
  char head[MAX_HEADER];
  snprintf(head, sizeof head, "D %llu %lu\n", c->id, (unsigned long)c->out.len);
  write_frame(head, c->out.data, c->out.len, NULL, 0);
  c->streamed += c->out.len;
  c->out.len = 0;
  c->raw_waiting = 0;
  c->wait_due = -1;
}

static void release_slot(struct call *c) {
  close_fd(&c->in_fd);
  close_fd(&c->out_fd);
  close_fd(&c->err_fd);
  free(c->req);
#ifdef BASIL_GATEWAY_LZ4
  if (c->lz4) LZ4F_freeCompressionContext(c->lz4);
#endif
  buf_free(&c->out);
  buf_free(&c->err);
  memset(c, 0, sizeof *c);
  c->in_fd = c->out_fd = c->err_fd = -1;
}

/* Answers a call that could not be started (how 2). */
static void refuse(unsigned long long id, int err, const char *why) {
  struct call c;
  memset(&c, 0, sizeof c);
  c.id = id;
  c.spawn_errno = err;
  buf_append(&c.err, why, strlen(why));
  send_answer(&c);
  buf_free(&c.err);
}

/* Linux: a pipe of 1 MiB, not 64 KiB, so that a long answer's writer and
   reader (apbasil and the helper, the helper and sshd) wait on each other
   less often (an 8.9 MB INVENTORY about 0.5 ms sooner through the chain,
   bench/slurm_pass_bench). Elsewhere, or refused (over
   /proc/sys/fs/pipe-max-size for an unprivileged user), the pipe stays as
   it is. */
#if defined(__linux__) && !defined(F_SETPIPE_SZ)
#define F_SETPIPE_SZ 1031
#endif
static void grow_pipe(int fd) {
#ifdef F_SETPIPE_SZ
  (void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#else
  (void)fd;
#endif
}

/* Runs run[] in a process group of its own, its stdin, stdout and stderr
   on new pipes whose other ends (close-on-exec) are returned. 0, or an
   errno.
   posix_spawn, not fork: where the C library spawns without copying the
   helper (glibc 2.24 and later use a vfork-like clone) each call costs
   less; measured under sshd, an emulated RESERVE ran 1.75 ms from spawn
   to answer against 2.62 ms after fork. The child gets an empty signal
   mask and SIGPIPE back to default. A program that cannot be run is then
   reported as "could not be started" (how 2, its errno); a C library that
   spawns with fork reports it as exit status 127. */
static int spawn_program(char **run, pid_t *pid, int *in_fd, int *out_fd, int *err_fd) {
  int pin[2], pout[2], perr[2];
  int e, i;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  sigset_t none, dfl;
  if (pipe(pin) != 0) return errno ? errno : EIO;
  if (pipe(pout) != 0) {
    e = errno ? errno : EIO;
    close(pin[0]);
    close(pin[1]);
    return e;
  }
  if (pipe(perr) != 0) {
    e = errno ? errno : EIO;
    close(pin[0]);
    close(pin[1]);
    close(pout[0]);
    close(pout[1]);
    return e;
  }
  grow_pipe(pout[0]);
  for (i = 0; i < 2; i++) {
    fcntl(pin[i], F_SETFD, FD_CLOEXEC);
    fcntl(pout[i], F_SETFD, FD_CLOEXEC);
    fcntl(perr[i], F_SETFD, FD_CLOEXEC);
  }
  sigemptyset(&none);
  sigemptyset(&dfl);
  sigaddset(&dfl, SIGPIPE);
  e = posix_spawn_file_actions_init(&fa);
  if (e == 0) {
    if (posix_spawnattr_init(&at) == 0) {
      if ((e = posix_spawn_file_actions_adddup2(&fa, pin[0], 0)) == 0 &&
          (e = posix_spawn_file_actions_adddup2(&fa, pout[1], 1)) == 0 &&
          (e = posix_spawn_file_actions_adddup2(&fa, perr[1], 2)) == 0 &&
          (e = posix_spawnattr_setsigmask(&at, &none)) == 0 &&
          (e = posix_spawnattr_setsigdefault(&at, &dfl)) == 0 && (e = posix_spawnattr_setpgroup(&at, 0)) == 0 &&
          (e = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                 POSIX_SPAWN_SETSIGDEF)) == 0)
        e = posix_spawn(pid, run[0], &fa, &at, run, environ);
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
    return e;
  }
  setpgid(*pid, *pid); /* also in the parent: no race with a kill */
  fcntl(pin[1], F_SETFL, fcntl(pin[1], F_GETFL) | O_NONBLOCK);
  *in_fd = pin[1];
  *out_fd = pout[0];
  *err_fd = perr[0];
  return 0;
}

/* Starts a spare when one is wanted and there is none. A spare that cannot
   be spawned is not retried here: the next call spawns its own and reports
   why it could not. */
static void refill_spare(void) {
  if (!spare_wanted || spare.pid > 0 || !stdin_open) return;
  if (spawn_program(apbasil_argv, &spare.pid, &spare.in_fd, &spare.out_fd, &spare.err_fd) != 0) {
    spare.pid = 0;
    spare.in_fd = spare.out_fd = spare.err_fd = -1;
    return;
  }
  spare.started = monotonic_seconds();
}

/* Writes what apbasil's stdin takes of the request (it does not block),
   and closes it once the request is all written or the pipe broke. */
static void feed_stdin(struct call *c) {
  if (c->req_off < c->req_len) {
    ssize_t w = write(c->in_fd, c->req + c->req_off, c->req_len - c->req_off);
    if (w > 0) c->req_off += (size_t)w;
    if (w < 0 && errno != EAGAIN && errno != EINTR) {
      close_fd(&c->in_fd);
      return;
    }
  }
  if (c->req_off == c->req_len) close_fd(&c->in_fd);
}

/* Hands the spare to call `c`, unless there is none, it has ended, or it is
   too old (then it is dropped). */
static int take_spare(struct call *c) {
  int status;
  pid_t r;
  if (spare.pid <= 0) return 0;
  do {
    r = waitpid(spare.pid, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r != 0) {
    drop_spare(1);
    return 0;
  }
  if (monotonic_seconds() - spare.started > SPARE_MAX_AGE) {
    drop_spare(0);
    return 0;
  }
  c->pid = spare.pid;
  c->in_fd = spare.in_fd;
  c->out_fd = spare.out_fd;
  c->err_fd = spare.err_fd;
  spare.pid = 0;
  spare.in_fd = spare.out_fd = spare.err_fd = -1;
  return 1;
}

static void start_call(unsigned long long id, char *req, size_t len, int sig, unsigned long long apid) {
  struct call *c = NULL;
  size_t i;
  int e = 0, took_spare = 0;
  for (i = 0; i < MAX_SLOTS; i++) {
    if (!slots[i].used) {
      c = &slots[i];
      break;
    }
  }
  if (!c) fatal("no free slot");
  memset(c, 0, sizeof *c);
  c->used = 1;
  c->id = id;
  c->req = req;
  c->req_len = len;
  c->signal = sig;
  c->apid = apid;
  c->in_fd = c->out_fd = c->err_fd = -1;
  c->wait_due = -1;
  if (sig) {
    snprintf(apkill_signal_word, sizeof apkill_signal_word, "-%d", sig);
    snprintf(apkill_apid_word, sizeof apkill_apid_word, "%llu", apid);
    e = spawn_program(apkill_argv, &c->pid, &c->in_fd, &c->out_fd, &c->err_fd);
  } else if (!take_spare(c)) {
    e = spawn_program(apbasil_argv, &c->pid, &c->in_fd, &c->out_fd, &c->err_fd);
  } else {
    took_spare = 1;
  }
  if (e != 0) {
    release_slot(c);
    refuse(id, e, strerror(e));
    return;
  }
  feed_stdin(c); /* at once: a spare waits for it, and the pipe takes a short request whole */
#ifdef BASIL_GATEWAY_LZ4
  if (compress_out) {
    size_t r;
    if (LZ4F_isError(LZ4F_createCompressionContext(&c->lz4, LZ4F_VERSION))) fatal("out of memory");
    if (buf_reserve(&c->out, LZ4F_HEADER_SIZE_MAX) != 0) fatal("out of memory");
    r = LZ4F_compressBegin(c->lz4, c->out.data, c->out.cap, &lz4_prefs);
    if (LZ4F_isError(r)) fatal(LZ4F_getErrorName(r));
    c->out.len = r;
  }
#endif
  /* The next spare starts while this one works (apbasil reads its request
     and acts on one CPU), so that a call close behind finds it. */
  if (took_spare) refill_spare();
}

static void start_queued(void) {
  while (queue_head && running_count() < max_running) {
    struct pending *p = queue_head;
    queue_head = p->next;
    if (!queue_head) queue_tail = NULL;
    queue_len--;
    start_call(p->id, p->req, p->len, p->signal, p->apid);
    free(p);
  }
}

static void enqueue(unsigned long long id, char *req, size_t len, int sig, unsigned long long apid) {
  struct pending *p = (struct pending *)malloc(sizeof *p);
  if (!p) fatal("out of memory");
  p->id = id;
  p->req = req;
  p->len = len;
  p->signal = sig;
  p->apid = apid;
  p->next = NULL;
  if (queue_tail)
    queue_tail->next = p;
  else
    queue_head = p;
  queue_tail = p;
  queue_len++;
  if (queue_len > 4096) fatal("too many queued requests");
  start_queued();
}

static void cancel(unsigned long long id) {
  size_t i;
  struct pending **pp = &queue_head, *prev = NULL;
  for (i = 0; i < MAX_SLOTS; i++) {
    if (slots[i].used && slots[i].id == id && slots[i].pid > 0 && !slots[i].exited) kill(-slots[i].pid, SIGKILL);
  }
  while (*pp) {
    if ((*pp)->id == id) {
      struct pending *gone = *pp;
      *pp = gone->next;
      if (queue_tail == gone) queue_tail = prev;
      queue_len--;
      free(gone->req);
      free(gone);
      return;
    }
    prev = *pp;
    pp = &(*pp)->next;
  }
}

/* The conduit has `bytes` more of call `id`'s D frames (a call that ended
   meanwhile is no longer there: nothing to do). */
static void credit(unsigned long long id, unsigned long long bytes) {
  size_t i;
  for (i = 0; i < MAX_SLOTS; i++) {
    struct call *c = &slots[i];
    if (c->used && c->id == id) {
      c->credited = bytes > c->streamed - c->credited ? c->streamed : c->credited + (size_t)bytes;
      return;
    }
  }
}

/* Whether the call's stdout may be read now: not while the flow window is
   full of its stdout on the way. */
static int may_read_stdout(const struct call *c) {
  return flow_window == 0 || c->streamed - c->credited + c->out.len < flow_window;
}

/* Parses up to `max` space-separated unsigned decimal numbers from s into
   v; returns the count parsed, or -1 (no digits, a value over
   ULLONG_MAX, a stray character or space, more than max numbers). */
static int parse_numbers(const char *s, unsigned long long *v, int max) {
  int n = 0;
  while (*s) {
    unsigned long long x = 0;
    int digits = 0;
    if (n == max) return -1;
    while (*s >= '0' && *s <= '9') {
      unsigned d = (unsigned)(*s - '0');
      if (x > (ULLONG_MAX - d) / 10) return -1;
      x = x * 10 + d;
      digits++;
      s++;
    }
    if (digits == 0) return -1;
    v[n++] = x;
    if (*s == ' ') {
      s++;
      if (!*s) return -1;
    } else if (*s) {
      return -1;
    }
  }
  return n;
}

static struct buf inbuf;

/* Marks every descriptor above 2 close-on-exec, once at start, so that no
   descriptor sshd or a wrapper left open reaches apbasil, without a loop of
   253 close() calls in every child (about 0.03 ms of a call, 1000 calls of
   /bin/true). The open ones are listed in /proc/self/fd; without /proc,
   the first 1024. */
static void close_inherited_on_exec(void) {
  DIR *d = opendir("/proc/self/fd");
  if (d) {
    const int own = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      char *end;
      const long fd = strtol(e->d_name, &end, 10);
      if (*end != '\0' || end == e->d_name || fd < 3 || fd == own) continue;
      fcntl((int)fd, F_SETFD, fcntl((int)fd, F_GETFD) | FD_CLOEXEC);
    }
    closedir(d);
  } else {
    int fd;
    for (fd = 3; fd < 1024; fd++) {
      const int flags = fcntl(fd, F_GETFD);
      if (flags >= 0) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
  }
}

/* SIGCHLD wakes poll() through this pipe; children are reaped by pid only. */
static int chld_pipe[2] = {-1, -1};

static void on_sigchld(int sig) {
  int saved = errno;
  char b = 0;
  (void)sig;
  if (write(chld_pipe[1], &b, 1) < 0) {
    /* full: a wake-up is already pending */
  }
  errno = saved;
}

/* Consumes complete frames at the start of inbuf. */
static void parse_input(void) {
  size_t off = 0;
  for (;;) {
    char line[MAX_HEADER];
    char *nl = (char *)memchr(inbuf.data + off, '\n', inbuf.len - off);
    size_t hlen;
    unsigned long long num[3] = {0, 0, 0};
    if (!nl) {
      if (inbuf.len - off >= MAX_HEADER) fatal("header line too long");
      break;
    }
    hlen = (size_t)(nl - (inbuf.data + off));
    if (hlen + 1 > MAX_HEADER) fatal("header line too long");
    memcpy(line, inbuf.data + off, hlen);
    line[hlen] = '\0';
    if (line[0] == 'Q' && line[1] == ' ') {
      char *req;
      unsigned long long len;
      if (parse_numbers(line + 2, num, 2) != 2) fatal("bad request header");
      len = num[1];
      if (len > max_request) fatal("request over the limit");
      if (inbuf.len - off - hlen - 1 < len) break; /* body not complete yet */
      req = (char *)malloc(len ? (size_t)len : 1);
      if (!req) fatal("out of memory");
      memcpy(req, nl + 1, (size_t)len);
      off += hlen + 1 + (size_t)len;
      enqueue(num[0], req, (size_t)len, 0, 0);
    } else if (line[0] == 'A' && line[1] == ' ') {
      if (parse_numbers(line + 2, num, 3) != 3 || num[1] < 1 || num[1] > 64) fatal("bad apkill header");
      off += hlen + 1;
      if (apkill_argv)
        enqueue(num[0], NULL, 0, (int)num[1], num[2]);
      else
        refuse(num[0], ENOENT, "no apkill: the helper was started without --apkill");
    } else if (line[0] == 'W' && line[1] == ' ') {
      if (parse_numbers(line + 2, num, 1) != 1 || num[0] < 2 * STREAM_BYTES) fatal("bad window header");
      off += hlen + 1;
      flow_window = (size_t)num[0];
    } else if (line[0] == 'C' && line[1] == ' ') {
      if (parse_numbers(line + 2, num, 2) != 2) fatal("bad credit header");
      off += hlen + 1;
      credit(num[0], num[1]);
    } else if (line[0] == 'S' && line[1] == ' ') {
      if (parse_numbers(line + 2, num, 1) != 1 || num[0] > 1) fatal("bad spare header");
      off += hlen + 1;
      spare_wanted = (int)num[0];
      if (spare_wanted)
        refill_spare();
      else
        drop_spare(0);
    } else if (line[0] == 'Z' && line[1] == ' ') {
#ifdef BASIL_GATEWAY_LZ4
      if (strcmp(line + 2, "lz4") != 0) fatal("bad compression header");
      off += hlen + 1;
      lz4_prefs_init();
      compress_out = 1;
#else
      fatal("compression not built in");
#endif
    } else if (line[0] == 'K' && line[1] == ' ') {
      if (parse_numbers(line + 2, num, 1) != 1) fatal("bad cancel header");
      off += hlen + 1;
      cancel(num[0]);
    } else {
      fatal("unknown frame");
    }
  }
  if (off > 0) {
    memmove(inbuf.data, inbuf.data + off, inbuf.len - off);
    inbuf.len -= off;
  }
}

static void reap(struct call *c) {
  pid_t r;
  do {
    r = waitpid(c->pid, &c->status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == c->pid || r < 0) c->exited = 1;
}

static size_t parse_size(const char *s) {
  char *end = NULL;
  unsigned long long v;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno || !end || *end || end == s || v == 0) {
    fprintf(stderr, "basil_gateway: bad number '%s'\n", s);
    exit(2);
  }
  return (size_t)v;
}

static void usage(void) {
  fprintf(stderr,
          "usage: basil_gateway [--max-running N] [--max-output BYTES] [--max-request BYTES]\n"
          "                     [--apkill /path/to/apkill] [--apkill-arg ARG]... /path/to/apbasil [ARGS...]\n");
  exit(2);
}

int main(int argc, char **argv) {
  int i = 1;
  size_t k;
  const char *apkill = NULL;
  /* The --apkill-arg words, in order (at most argc of them). */
  char **apkill_args = (char **)calloc((size_t)argc + 1, sizeof *apkill_args);
  size_t n_apkill_args = 0;
  if (!apkill_args) return 2;
  close_inherited_on_exec();
  grow_pipe(1); /* sshd's pipe, where it is one */
  signal(SIGPIPE, SIG_IGN);
  if (pipe(chld_pipe) == 0) {
    struct sigaction sa;
    fcntl(chld_pipe[0], F_SETFL, fcntl(chld_pipe[0], F_GETFL) | O_NONBLOCK);
    fcntl(chld_pipe[1], F_SETFL, fcntl(chld_pipe[1], F_GETFL) | O_NONBLOCK);
    fcntl(chld_pipe[0], F_SETFD, FD_CLOEXEC);
    fcntl(chld_pipe[1], F_SETFD, FD_CLOEXEC);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigchld;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, NULL);
  }
  while (i < argc && strncmp(argv[i], "--", 2) == 0) {
    if (strcmp(argv[i], "--") == 0) {
      i++;
      break;
    }
    if (i + 1 >= argc) break;
    if (strcmp(argv[i], "--max-running") == 0)
      max_running = parse_size(argv[i + 1]);
    else if (strcmp(argv[i], "--max-output") == 0)
      max_output = parse_size(argv[i + 1]);
    else if (strcmp(argv[i], "--max-request") == 0)
      max_request = parse_size(argv[i + 1]);
    else if (strcmp(argv[i], "--apkill") == 0)
      apkill = argv[i + 1];
    else if (strcmp(argv[i], "--apkill-arg") == 0)
      apkill_args[n_apkill_args++] = argv[i + 1];
    else {
      fprintf(stderr, "basil_gateway: unknown option %s\n", argv[i]);
      return 2;
    }
    i += 2;
  }
  if (i >= argc || argv[i][0] != '/') usage();
  if (apkill ? apkill[0] != '/' : n_apkill_args > 0) usage();
  if (max_running > MAX_SLOTS) max_running = MAX_SLOTS;
  apbasil_argv = argv + i;
  if (apkill) {
    apkill_argv = (char **)calloc(n_apkill_args + 4, sizeof *apkill_argv);
    if (!apkill_argv) return 2;
    apkill_argv[0] = (char *)apkill;
    for (k = 0; k < n_apkill_args; k++) apkill_argv[k + 1] = apkill_args[k];
    apkill_argv[n_apkill_args + 1] = apkill_signal_word;
    apkill_argv[n_apkill_args + 2] = apkill_apid_word;
  }
  free(apkill_args);
  for (k = 0; k < MAX_SLOTS; k++) slots[k].in_fd = slots[k].out_fd = slots[k].err_fd = -1;
#ifdef BASIL_GATEWAY_LZ4
  if (write_all(1, "BASIL-GATEWAY 5 lz4\n", 20) != 0) return 0;
#else
  if (write_all(1, "BASIL-GATEWAY 5\n", 16) != 0) return 0;
#endif

  for (;;) {
    struct pollfd fds[2 + 3 * MAX_SLOTS];
    struct call *owner[2 + 3 * MAX_SLOTS];
    int which[2 + 3 * MAX_SLOTS];
    nfds_t n = 0;
    int timeout = -1, r, answered = 0;
    if (chld_pipe[0] >= 0) {
      fds[n].fd = chld_pipe[0];
      fds[n].events = POLLIN;
      owner[n] = NULL;
      which[n] = 3;
      n++;
    }
    if (stdin_open) {
      fds[n].fd = 0;
      fds[n].events = POLLIN;
      owner[n] = NULL;
      which[n] = 0;
      n++;
    }
    for (k = 0; k < MAX_SLOTS; k++) {
      struct call *c = &slots[k];
      if (!c->used) continue;
      if (c->in_fd >= 0) {
        fds[n].fd = c->in_fd;
        fds[n].events = POLLOUT;
        owner[n] = c;
        which[n] = 0;
        n++;
      }
      if (c->out_fd >= 0 && may_read_stdout(c)) {
        fds[n].fd = c->out_fd;
        fds[n].events = POLLIN;
        owner[n] = c;
        which[n] = 1;
        n++;
      }
      if (c->err_fd >= 0) {
        fds[n].fd = c->err_fd;
        fds[n].events = POLLIN;
        owner[n] = c;
        which[n] = 2;
        n++;
      }
      /* Waiting for the exit: SIGCHLD wakes us; the timeout is a fallback. */
      if (c->out_fd < 0 && c->err_fd < 0 && !c->exited) {
        int fallback = chld_pipe[0] >= 0 ? 50 : 2;
        if (timeout < 0 || fallback < timeout) timeout = fallback;
      }
      if (c->out_fd >= 0) timeout = until_due(timeout, c->wait_due);
    }
    timeout = until_due(timeout, spare_due);
    timeout = until_due(timeout, held_due);
    if (!stdin_open && running_count() == 0 && !queue_head) break;
    r = poll(fds, n, timeout);
    if (r < 0 && errno != EINTR) fatal("poll failed");
    for (k = 0; r > 0 && k < (size_t)n; k++) {
      char chunk[65536];
      ssize_t got;
      struct call *c = owner[k];
      if (fds[k].revents == 0) continue;
      if (which[k] == 3) {
        while (read(chld_pipe[0], chunk, sizeof chunk) > 0) {
        }
        continue;
      }
      if (!c) {
        got = read(0, chunk, sizeof chunk);
        if (got > 0) {
          if (buf_append(&inbuf, chunk, (size_t)got) != 0) fatal("out of memory");
          parse_input();
        } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
          stdin_open = 0;
          flow_window = 0; /* no credit comes any more: the answers run out as they are */
          drop_spare(0);
        }
        continue;
      }
      if (which[k] == 0) {
        feed_stdin(c);
        continue;
      }
      got = read(which[k] == 1 ? c->out_fd : c->err_fd, chunk, sizeof chunk);
      if (got > 0) {
        if (which[k] == 1) {
          if (c->raw + (size_t)got > max_output) {
            c->overflow = 1;
            c->early = 0;
            kill(-c->pid, SIGKILL);
            close_fd(&c->out_fd);
          } else if (!c->overflow) {
            c->raw += (size_t)got;
            c->raw_waiting += (size_t)got;
#ifdef BASIL_GATEWAY_LZ4
            if (c->lz4)
              compress_stdout(c, chunk, (size_t)got);
            else
#endif
                if (buf_append(&c->out, chunk, (size_t)got) != 0)
              fatal("out of memory");
            note_last_byte(c, chunk, (size_t)got);
            /* More after the early piece: it was not the whole answer, and
               the conduit waits for the R frame, which is not held then. */
            if (c->streamed > 0) c->early = 0;
            if (frame_due(c)) {
              send_data(c);
            } else if (c->streamed == 0 && !c->signal && c->last == '>' && c->raw_waiting < STREAM_BYTES) {
              c->early = 1;
              send_data(c);
            } else if (compressed(c) && c->wait_due < 0 && (c->streamed > 0 || c->raw_waiting >= STREAM_BYTES)) {
              c->wait_due = monotonic_ms() + STREAM_WAIT_MS;
            }
          }
        } else if (c->err.len + (size_t)got <= MAX_STDERR) {
          buf_append(&c->err, chunk, (size_t)got);
        }
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        close_fd(which[k] == 1 ? &c->out_fd : &c->err_fd);
      }
    }
    for (k = 0; k < MAX_SLOTS; k++) {
      struct call *c = &slots[k];
      /* A long answer (one that streams already) goes on with what this
         round read: a writer that pauses leaves nothing behind here.
         Compressed, it goes on in frames of ZSTREAM_BYTES, and what a
         pause holds back leaves at its wait_due. */
      if (c->used && c->raw_waiting > 0 && c->out_fd >= 0 && !c->overflow &&
          (compressed(c) ? c->wait_due >= 0 && monotonic_ms() >= c->wait_due : c->streamed > 0))
        send_data(c);
      if (!c->used || c->out_fd >= 0 || c->err_fd >= 0) continue;
      if (!c->exited) reap(c);
      if (!c->exited) continue;
      send_answer(c);
      release_slot(c);
      answered = 1;
    }
    start_queued();
    /* The next spare: SPARE_DELAY_MS after the answers have left. */
    if (answered && spare_due < 0) spare_due = monotonic_ms() + SPARE_DELAY_MS;
    if (held_due >= 0 && monotonic_ms() >= held_due) send_held();
    if (spare_due >= 0 && monotonic_ms() >= spare_due) {
      spare_due = -1;
      refill_spare();
    }
    if (!stdin_open && running_count() == 0 && !queue_head) break;
  }
  send_held();
  drop_spare(0);
  return 0;
}
