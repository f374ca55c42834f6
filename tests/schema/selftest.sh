#!/bin/sh
# Self-test of the hand-written RELAX NG schemas.
#
#   selftest.sh [-v]
#
# examples/<variant>/valid/*.{request,response}.xml   must validate
# examples/<variant>/invalid/*.{request,response}.xml must be well-formed and
#                                                     must NOT validate
# against <kind>-<variant>.rng (kind = request or response; variant = 1.0, 1.1,
# 1.1+, 1.2, 1.3, or the extra 1.3 variants 1.3-strict, 1.3-cle52quirk).
# Every schema must also compile. Each invalid example says in a leading comment
# what is wrong with it; -v prints that comment next to xmllint's first complaint,
# so that one can check it fails for the intended reason.
# Exit 0 when all checks pass, 1 otherwise, 2 on an environment error.
set -u

here=$(cd "$(dirname "$0")" && pwd)
verbose=0
[ "${1:-}" = "-v" ] && verbose=1

if ! command -v xmllint >/dev/null 2>&1; then
  echo "selftest.sh: xmllint not found (Debian package libxml2-utils)" >&2
  exit 2
fi

checks=0
bad=0
fail() { bad=$((bad + 1)); echo "FAIL $*"; }

# 1. Every dialect schema compiles (xmllint exits 5 when it does not).
dummy=$(mktemp)
trap 'rm -f "$dummy"' EXIT
echo '<x/>' >"$dummy"
for s in "$here"/request-*.rng "$here"/response-*.rng; do
  case $s in *-base.rng) continue ;; esac
  checks=$((checks + 1))
  xmllint --noout --relaxng "$s" "$dummy" >/dev/null 2>&1
  [ $? -eq 5 ] && fail "$(basename "$s"): schema does not compile"
done

# 2. Examples.
found=0
for vdir in "$here"/examples/*/; do
  variant=$(basename "$vdir")
  for expect in valid invalid; do
    for f in "$vdir$expect"/*.request.xml "$vdir$expect"/*.response.xml; do
      [ -f "$f" ] || continue
      found=$((found + 1))
      checks=$((checks + 1))
      case $f in
        *.request.xml)  schema=$here/request-$variant.rng ;;
        *.response.xml) schema=$here/response-$variant.rng ;;
      esac
      name="$variant/$expect/$(basename "$f")"
      if [ ! -f "$schema" ]; then
        fail "$name: no schema $(basename "$schema")"
        continue
      fi
      out=$(xmllint --noout --relaxng "$schema" "$f" 2>&1)
      rc=$?
      why=$(printf '%s\n' "$out" | grep -v 'fails to validate$' | head -n 1)
      if [ "$expect" = valid ]; then
        [ $rc -eq 0 ] || fail "$name: rejected: $why"
      else
        case $rc in
          3) if [ $verbose -eq 1 ]; then
               intent=$(sed -n 's/.*<!-- *invalid: *\(.*\) *-->.*/\1/p' "$f" | head -n 1)
               echo "ok   $name"
               echo "       intent: $intent"
               echo "       xmllint: $why"
             fi ;;
          0) fail "$name: accepted, but it is invalid" ;;
          *) fail "$name: not a validity failure (xmllint exit $rc): $why" ;;
        esac
      fi
    done
  done
done

[ $found -gt 0 ] || fail "no examples under $here/examples"
echo "schema selftest: $checks check(s), $bad failed"
[ $bad -eq 0 ]
