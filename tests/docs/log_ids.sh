#!/bin/sh
# Every message id basild and apbasil_proxy log (log.<level>("Bnnnn", ...))
# is in basild(8)'s LOG MESSAGES with the same level, and that section names
# no id the code no longer logs.
set -eu
top=$1
man=$top/man/man8/basild.8
code=$(grep -rhoE 'log_?\.[a-z]+\("B[0-9]{4}"' "$top/basild" "$top/apbasil_proxy" |
       sed -E 's/log_?\.([a-z]+)\("(B[0-9]{4})"/\2 \1/' | sort -u)
documented=$(sed -n '/^\.SH LOG MESSAGES/,/^\.SH /p' "$man" | sed -n 's/^\.B \(B[0-9]\{4\}\) \([a-z]*\)$/\1 \2/p' | sort -u)
[ -n "$code" ] || { echo "no log ids found under $top"; exit 1; }
missing=$(printf '%s\n' "$code" | grep -vxF "$documented" || true)
stale=$(printf '%s\n' "$documented" | grep -vxF "$code" || true)
[ -z "$missing" ] || echo "logged but not in basild(8) LOG MESSAGES (id level):
$missing"
[ -z "$stale" ] || echo "in basild(8) LOG MESSAGES but not logged (id level):
$stale"
[ -z "$missing" ] && [ -z "$stale" ]
