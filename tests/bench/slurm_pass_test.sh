#!/usr/bin/env bash
# slurm_pass_bench end to end on tds-8 with a few jobs and one run per path:
# it must run, every call on both paths must succeed, and the
# report must name both paths and every method Slurm uses. It asserts no
# speed. Skipped (77) without /usr/sbin/sshd, which the chain needs.
#   slurm_pass_test.sh SLURM_PASS_BENCH
set -euo pipefail
bench=$1
[ -x /usr/sbin/sshd ] || { echo "no /usr/sbin/sshd: skipped"; exit 77; }
out=$(mktemp -d "${TMPDIR:-/tmp}/basil-slurm-pass-XXXXXX")
trap 'rm -rf "$out"' EXIT
"$bench" --jobs 6 --runs 1 --preset tds-8 --json "$out/report.json" >"$out/stdout" 2>"$out/stderr" || {
  cat "$out/stdout" "$out/stderr"; exit 1; }
fail=0
check() { grep -qE -- "$1" "$out/stdout" || { echo "missing in report: $1"; fail=1; }; }
check "^slurm_pass_bench: tds-8, "
check "^full INVENTORY \(1\.3\): [0-9]+ bytes"
check "^ratio chain/direct: [0-9]"
for path in direct chain; do
  check "^$path +[0-9.]+ +[0-9.]+$"
  check "^$path: 0 failures "
done
for method in INVENTORY RESERVE ENGINE CONFIRM RELEASE; do check "^$method +[1-9][0-9]* +[1-9][0-9]* .* 0/0$"; done
# One run per path: one round, one difference per method.
check "^diff p50 in each round"
for method in INVENTORY RESERVE ENGINE CONFIRM RELEASE; do check "^$method +[+-][0-9]+\.[0-9]{2}$"; done
grep -q '"ratio_chain_direct"' "$out/report.json" || { echo "no JSON report"; fail=1; }
grep -q '"p50_ms_per_run"' "$out/report.json" || { echo "no p50_ms_per_run in the JSON report"; fail=1; }
[ "$fail" = 0 ] || { cat "$out/stdout" "$out/stderr"; exit 1; }
echo "slurm pass ok: $(grep '^ratio' "$out/stdout")"
