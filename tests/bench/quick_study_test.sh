#!/usr/bin/env bash
# The timing study's quick variant end to end: basil-bench plays a
# few jobs against a real basild and emulator on tds-8, for the local and the
# gateway conduit; the report must name every scenario, every method, the
# check, and the charts must exist.
#   quick_study_test.sh BASIL_BENCH
set -euo pipefail
bench=$1
out=$(mktemp -d "${TMPDIR:-/tmp}/basil-quick-study-XXXXXX")
trap 'rm -rf "$out"' EXIT
"$bench" --quick --presets tds-8 --conduits local,gateway --jobs 6 --idle 2 \
  --commit test --command quick_study_test.sh --out "$out" >"$out/stdout" 2>"$out/stderr" || {
  cat "$out/stdout" "$out/stderr"; exit 1; }
md="$out/timing.md"
fail=0
check() { grep -qF -- "$1" "$md" || { echo "missing in report: $1"; fail=1; }; }
for conduit in local gateway; do
  for mode in inventory summary-hybrid; do
    for model in off on; do check "### tds-8 $conduit $mode model-$model"; done
  done
done
for method in INVENTORY SUMMARY RESERVE CONFIRM RELEASE; do check "| $method |"; done
check "| commit | \`test\` |"
check "| machine | "
check "checks within 10%"
# Every scenario ran all its jobs: the gateway ones against the sshd that
# basil-bench starts on 127.0.0.1 (skipped only without /usr/sbin/sshd).
want=8
[ -x /usr/sbin/sshd ] || want=4
[ "$(grep -c '^Jobs 6 of 6,' "$md")" -ge "$want" ] || { echo "a scenario did not run its 6 jobs (want $want)"; fail=1; }
for stem in fig1-small-system fig2-idle-busy fig3-large-system fig4-remote; do
  for ext in svg png; do
    [ -s "$out/timing/$stem.$ext" ] || { echo "missing chart $stem.$ext"; fail=1; }
  done
done
[ "$fail" = 0 ] || { cat "$md" "$out/stderr"; exit 1; }
echo "quick study ok: $(tail -1 "$out/stdout")"
