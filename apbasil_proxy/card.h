/* The proxy's card: what apbasil_proxy needs of basild.conf (the control
 * socket and how long to wait for basild), kept where the lean front reads
 * it without parsing the configuration. apbasil_proxy-full, which parses
 * basild.conf with the project's TOML reader, writes it; the lean front
 * (lean_front.c, linked against musl where musl-gcc is there) reads it.
 *
 * A card is a fixed-size record, written whole and renamed into place. It
 * names the configuration file it was made from and that file's identity
 * (device, inode, size, modification and change times): a card whose file
 * has changed or moved is not used. It is trusted only when it is a regular
 * file owned by the reader or by root, writable by its owner alone.
 *
 * Plain C, for both programs: the lean front links no C++ runtime. */
#ifndef APBASIL_PROXY_CARD_H
#define APBASIL_PROXY_CARD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { BASIL_CARD_PATH_MAX = 4096, BASIL_CARD_SOCKET_MAX = 108 };

struct basil_card {
  char magic[8];     /* "BASILPC1" */
  uint32_t size;     /* sizeof(struct basil_card) */
  uint32_t guard_ms; /* how long the front waits for basild's answer */
  uint64_t dev, ino, bytes;
  int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
  char config[BASIL_CARD_PATH_MAX];   /* the configuration file, as the caller named it */
  char socket[BASIL_CARD_SOCKET_MAX]; /* [control] socket */
};

/* Why a card was not used (basil_card_load); 0 is a usable card. */
enum basil_card_verdict {
  BASIL_CARD_OK = 0,
  BASIL_CARD_NONE = 1,       /* no card, or it cannot be read */
  BASIL_CARD_UNTRUSTED = 2,  /* not a regular file, another owner, or writable by others */
  BASIL_CARD_MALFORMED = 3,  /* wrong size or magic, or an unterminated string */
  BASIL_CARD_OTHER_FILE = 4, /* made from another configuration path */
  BASIL_CARD_STALE = 5,      /* the configuration file changed since (or is gone) */
};

/* The folder of the cards: $APBASIL_PROXY_CARD_DIR when set and not empty,
 * else /dev/shm. */
const char* basil_card_dir(void);

/* The card's path for configuration `config` read by user `uid`:
 * DIR/apbasil_proxy.UID.HASH, HASH a 64-bit FNV-1a of the path. 0, or -1
 * when it does not fit in `n` bytes. */
int basil_card_path(char* out, size_t n, const char* dir, uid_t uid, const char* config);

/* Reads the card at `path` for configuration `config` into `card`, for a
 * reader whose effective user is `euid`. */
enum basil_card_verdict basil_card_load(const char* path, const char* config, uid_t euid, struct basil_card* card);

/* Writes a card at `path` for configuration `config`, whose identity `st`
 * the caller took (fstat) before reading it: through a temporary file
 * beside it, renamed into place. 0, or -errno (the socket path or the
 * configuration's name too long: -ENAMETOOLONG). */
struct stat;
int basil_card_store(const char* path, const char* config, const struct stat* st, const char* socket,
                     uint32_t guard_ms);

#ifdef __cplusplus
}
#endif

#endif
