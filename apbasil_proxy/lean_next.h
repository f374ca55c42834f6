/* What the lean front (lean_front.c) does once its exchange with basild is
 * over: the rule alone, apart from the sockets and programs it acts on. */
#ifndef APBASIL_PROXY_LEAN_NEXT_H
#define APBASIL_PROXY_LEAN_NEXT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How the exchange ended. */
struct lean_exchange_end {
  int failed;         /* it broke (after the request went out), or timed out */
  int basil;          /* basild's answer is a BASIL document (ALPS's, or its own FAILURE) */
  int streaming;      /* and it was passed on as it came */
  uint64_t passed_on; /* bytes of it written to standard output */
};

enum lean_next {
  LEAN_DONE,       /* the answer went out as it came: exit 0 */
  LEAN_WRITE_BODY, /* write the answer basild sent whole, then exit */
  LEAN_BROKE_OFF,  /* a part of the answer is out, and no document can follow: say so on stderr, exit 1 */
  LEAN_FALLBACK,   /* nothing went out; the call may be with ALPS and is never sent twice:
                      apbasil_proxy-fallback writes the FAILURE */
  LEAN_FULL,       /* basild refused the call (not acted on): apbasil_proxy-full sends it again */
};

enum lean_next lean_next_step(const struct lean_exchange_end* end);

#ifdef __cplusplus
}
#endif

#endif
