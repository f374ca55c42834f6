#!/bin/sh
# Validate BASIL golden files against the hand-written RELAX NG schemas.
#
#   validate.sh [DIR]      DIR defaults to tests/data/basil (next to this script)
#
# For every dialect directory DIR/<d> with <d> exactly one of 1.0 1.1 1.1+ 1.2 1.3
# (other directories are skipped), validates
#   <d>/*.request.xml   against request-<d>.rng
#   <d>/*.response.xml  against response-<d>.rng
# with `xmllint --noout --relaxng`. Prints one line per failing file and a final
# count line. Exits 1 if any file fails or no file was found, 2 on a usage or
# environment error.
set -u

here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/../data/basil}

if ! command -v xmllint >/dev/null 2>&1; then
  echo "validate.sh: xmllint not found (Debian package libxml2-utils)" >&2
  exit 2
fi
if [ ! -d "$dir" ]; then
  echo "validate.sh: no such directory: $dir" >&2
  exit 2
fi

total=0
failed=0
for dialect in 1.0 1.1 1.1+ 1.2 1.3; do
  [ -d "$dir/$dialect" ] || continue
  for f in "$dir/$dialect"/*.request.xml "$dir/$dialect"/*.response.xml; do
    [ -f "$f" ] || continue          # unmatched glob
    case $f in
      *.request.xml)  schema=$here/request-$dialect.rng ;;
      *.response.xml) schema=$here/response-$dialect.rng ;;
    esac
    total=$((total + 1))
    if ! out=$(xmllint --noout --relaxng "$schema" "$f" 2>&1); then
      failed=$((failed + 1))
      # first diagnostic line that is not xmllint's summary, on one line
      why=$(printf '%s\n' "$out" | grep -v 'fails to validate$' | head -n 1)
      echo "FAIL $dialect/$(basename "$f") [$(basename "$schema")]: $why"
    fi
  done
done

echo "schema: $total file(s) checked, $failed failed"
if [ "$total" -eq 0 ]; then
  echo "validate.sh: no <dialect>/*.request.xml or *.response.xml under $dir" >&2
  exit 1
fi
[ "$failed" -eq 0 ]
