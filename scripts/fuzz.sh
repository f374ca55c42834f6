#!/usr/bin/env bash
# Runs libFuzzer targets for SECONDS each (default 10: the smoke run the test
# command does), seeded from tests/data, conf/ and fuzz/seeds/.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# Environment:
#   BASIL_FUZZ_RUNS=N      stop each target after N executions instead
#                          (-runs=N; SECONDS still bounds the time)
#   BASIL_FUZZ_CORPUS=DIR  keep the corpus in DIR/<target> across runs
#                          (default: a temporary directory)
#   BASIL_FUZZ_JOBS=N      libFuzzer workers per target (-fork=N; default 1)
# Long campaign (hours; 10 million executions per target or 4 h, whichever first):
#   BASIL_FUZZ_RUNS=10000000 BASIL_FUZZ_CORPUS=$HOME/basil-corpus scripts/fuzz.sh 14400
# Each target prints executions, coverage (cov, ft), peak RSS; a crash, leak or
# timeout fails the run and leaves the reproducer in build-fuzz/artifacts/.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-10}
shift || true
all=(fuzz_decode_response fuzz_decode_request fuzz_nidlist fuzz_config fuzz_control_request fuzz_gateway_frames)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
"$top/scripts/setup.sh" fuzz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
corpus_root=${BASIL_FUZZ_CORPUS:-$work/corpus}
artifacts="$top/build-fuzz/artifacts"   # crash, leak and timeout reproducers
mkdir -p "$artifacts"
status=0
for target in "${targets[@]}"; do
  corpus="$corpus_root/$target"
  mkdir -p "$corpus"
  case "$target" in
    fuzz_nidlist) printf '1-5,8,10-11' >"$corpus/seed1"; printf '24-1030,1032-2279' >"$corpus/seed2" ;;
    fuzz_config) cp "$top/conf/basild.conf" "$top"/fuzz/seeds/config/*.conf "$corpus/" ;;
    fuzz_control_request) cp "$top"/fuzz/seeds/control_request/*.http "$corpus/" ;;
    fuzz_gateway_frames) cp "$top"/fuzz/seeds/gateway_frames/*.bin "$corpus/" ;;
    *) find "$top/tests/data/basil" -name '*.xml' -exec cp {} "$corpus/" \; 2>/dev/null || true ;;
  esac
  args=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
        -artifact_prefix="$artifacts/$target-")
  [ -z "${BASIL_FUZZ_RUNS:-}" ] || args+=(-runs="$BASIL_FUZZ_RUNS")
  [ -z "${BASIL_FUZZ_JOBS:-}" ] || args+=(-fork="$BASIL_FUZZ_JOBS")
  echo "fuzz: $target for ${seconds}s"
  log="$work/$target.log"
  if ! (cd "$work" && "$top/build-fuzz/fuzz/$target" "${args[@]}" "$corpus" >"$log" 2>&1); then
    echo "fuzz: $target FAILED; log follows" >&2
    tail -n 60 "$log" >&2
    status=1
  else
    # The last status line ("#N DONE cov: C ft: F corp: ...") and the final stats.
    grep -E '^#[0-9]+' "$log" | tail -n 1 | sed "s/^/fuzz: $target /"
    grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$log" | sed "s/^/fuzz: $target /"
  fi
done
exit $status
