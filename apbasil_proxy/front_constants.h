/* What apbasil_proxy (lean_front.c, C) and the C++ programs beside it
 * (handover.h) must agree on, in one place both languages read. */
#ifndef APBASIL_PROXY_FRONT_CONSTANTS_H
#define APBASIL_PROXY_FRONT_CONSTANTS_H

/* A request longer than this is refused (a PERMANENT FAILURE). */
#define APBASIL_PROXY_MAX_REQUEST_BYTES (1u << 20)
/* The scheduler's pipe is grown to this for a long answer (Linux's default
 * fs.pipe-max-size, allowed to every user). */
#define APBASIL_PROXY_PIPE_BYTES (1u << 20)
/* A compressed answer is decompressed in steps of this size. */
#define APBASIL_PROXY_INFLATE_STEP (256u << 10)
/* The control socket's target for a scheduler's call: basild answers a call
 * it took and could not carry out with a BASIL FAILURE of its own. */
#define APBASIL_PROXY_BASIL_TARGET "/v1/basil?failures=basil"

#endif
