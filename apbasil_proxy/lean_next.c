/* See lean_next.h. */
#include "apbasil_proxy/lean_next.h"

enum lean_next lean_next_step(const struct lean_exchange_end* end) {
  if (end->failed) return end->passed_on > 0 ? LEAN_BROKE_OFF : LEAN_FALLBACK;
  if (!end->basil) return LEAN_FULL;
  return end->streaming ? LEAN_DONE : LEAN_WRITE_BODY;
}
