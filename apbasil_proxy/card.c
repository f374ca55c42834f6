/* The proxy's card (card.h). */
#include "apbasil_proxy/card.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char kMagic[8] = {'B', 'A', 'S', 'I', 'L', 'P', 'C', '1'};

const char* basil_card_dir(void) {
  const char* e = getenv("APBASIL_PROXY_CARD_DIR");
  return e != NULL && *e != '\0' ? e : "/dev/shm";
}

int basil_card_path(char* out, size_t n, const char* dir, uid_t uid, const char* config) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char* p = (const unsigned char*)config; *p != '\0'; ++p) {
    h ^= *p;
    h *= 1099511628211ull;
  }
  const int w = snprintf(out, n, "%s/apbasil_proxy.%lu.%016llx", dir, (unsigned long)uid, (unsigned long long)h);
  return w > 0 && (size_t)w < n ? 0 : -1;
}

static void set_identity(struct basil_card* c, const struct stat* st) {
  c->dev = (uint64_t)st->st_dev;
  c->ino = (uint64_t)st->st_ino;
  c->bytes = (uint64_t)st->st_size;
  c->mtime_s = (int64_t)st->st_mtim.tv_sec;
  c->mtime_ns = (int64_t)st->st_mtim.tv_nsec;
  c->ctime_s = (int64_t)st->st_ctim.tv_sec;
  c->ctime_ns = (int64_t)st->st_ctim.tv_nsec;
}

static int terminated(const char* s, size_t n) { return memchr(s, '\0', n) != NULL; }

enum basil_card_verdict basil_card_load(const char* path, const char* config, uid_t euid, struct basil_card* card) {
  /* O_NONBLOCK: a FIFO another user put here must not hold the open (nor a
   * read) up; only a regular file of ours is read, see below. */
  const int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return errno == ELOOP || errno == ENXIO ? BASIL_CARD_UNTRUSTED : BASIL_CARD_NONE;
  struct stat st;
  enum basil_card_verdict v = BASIL_CARD_OK;
  if (fstat(fd, &st) != 0) {
    v = BASIL_CARD_NONE;
  } else if (!S_ISREG(st.st_mode) || (st.st_uid != euid && st.st_uid != 0) || (st.st_mode & 022) != 0) {
    v = BASIL_CARD_UNTRUSTED;
  } else if (st.st_size != (off_t)sizeof *card) {
    v = BASIL_CARD_MALFORMED;
  } else {
    size_t got = 0;
    while (got < sizeof *card) {
      const ssize_t r = read(fd, (char*)card + got, sizeof *card - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += (size_t)r;
    }
    if (got != sizeof *card) v = BASIL_CARD_NONE;
  }
  close(fd);
  if (v != BASIL_CARD_OK) return v;
  if (memcmp(card->magic, kMagic, sizeof kMagic) != 0 || card->size != sizeof *card ||
      !terminated(card->config, sizeof card->config) || !terminated(card->socket, sizeof card->socket) ||
      card->socket[0] == '\0')
    return BASIL_CARD_MALFORMED;
  if (strcmp(card->config, config) != 0) return BASIL_CARD_OTHER_FILE;
  struct stat now;
  if (stat(config, &now) != 0) return BASIL_CARD_STALE;
  struct basil_card id;
  set_identity(&id, &now);
  if (id.dev != card->dev || id.ino != card->ino || id.bytes != card->bytes || id.mtime_s != card->mtime_s ||
      id.mtime_ns != card->mtime_ns || id.ctime_s != card->ctime_s || id.ctime_ns != card->ctime_ns)
    return BASIL_CARD_STALE;
  return BASIL_CARD_OK;
}

int basil_card_store(const char* path, const char* config, const struct stat* st, const char* socket,
                     uint32_t guard_ms) {
  struct basil_card c;
  memset(&c, 0, sizeof c);
  if (strlen(config) >= sizeof c.config || strlen(socket) >= sizeof c.socket || socket[0] == '\0') return -ENAMETOOLONG;
  memcpy(c.magic, kMagic, sizeof kMagic);
  c.size = sizeof c;
  c.guard_ms = guard_ms;
  set_identity(&c, st);
  strcpy(c.config, config);
  strcpy(c.socket, socket);

  char tmp[BASIL_CARD_PATH_MAX + 16];
  if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp) return -ENAMETOOLONG;
  const int fd = mkstemp(tmp); /* mode 0600 */
  if (fd < 0) return -errno;
  size_t put = 0;
  int err = 0;
  while (put < sizeof c) {
    const ssize_t w = write(fd, (const char*)&c + put, sizeof c - put);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      err = w < 0 ? errno : EIO;
      break;
    }
    put += (size_t)w;
  }
  if (close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && rename(tmp, path) != 0) err = errno;
  if (err != 0) {
    unlink(tmp);
    return -err;
  }
  return 0;
}
