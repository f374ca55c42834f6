#!/usr/bin/env bash
# Runs every libFuzzer target for SECONDS each (default 10) with the golden
# files as seed corpus. A longer campaign: scripts/fuzz.sh 3600
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-10}
"$top/scripts/setup.sh" fuzz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for target in fuzz_decode_response fuzz_decode_request fuzz_nidlist; do
  corpus="$work/$target"
  mkdir -p "$corpus"
  case "$target" in
    fuzz_nidlist) printf '1-5,8,10-11' >"$corpus/seed1"; printf '24-1030,1032-2279' >"$corpus/seed2" ;;
    *) find "$top/tests/data/basil" -name '*.xml' -exec cp {} "$corpus/" \; 2>/dev/null || true ;;
  esac
  echo "fuzz: $target for ${seconds}s"
  if ! (cd "$work" && "$top/build-fuzz/fuzz/$target" -max_total_time="$seconds" -rss_limit_mb=2048 \
          -timeout=10 -print_final_stats=1 "$corpus" >"$work/$target.log" 2>&1); then
    echo "fuzz: $target FAILED; log follows" >&2
    tail -n 60 "$work/$target.log" >&2
    status=1
  else
    grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$work/$target.log" | sed "s/^/fuzz: $target /"
  fi
done
exit $status
