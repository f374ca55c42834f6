#!/usr/bin/env bash
# The README's examples of "Running basild", "Job geometry (nppcu)" and
# "Slurm's node lines from ALPS", run
# in the order they are printed against a fresh ./scripts/run (its run
# directory in a temporary place instead of build/run). Each must exit 0.
#   readme_examples.sh SOURCE_DIR
set -uo pipefail
top=$(cd "${1:?usage: readme_examples.sh SOURCE_DIR}" && pwd)
. "$top/tests/support/scratch.sh" readme
run="$work/run"

BASIL_RUN_DIR="$run" "$top/scripts/run" >"$work/run.log" 2>&1 &
pid=$!
ctl="$top/build/basild/basilctl"
for _ in $(seq 1 600); do
  "$ctl" --socket "$run/control.sock" health >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { echo "scripts/run ended:"; cat "$work/run.log"; exit 1; }
  sleep 0.1
done
"$ctl" --socket "$run/control.sock" health >/dev/null || { echo "basild never became healthy"; cat "$work/run.log"; exit 1; }

# The sh blocks of the three sections, as printed.
awk '
  /^## / { section = substr($0, 4) }
  /^```sh$/ && (section == "Running basild" || section == "Job geometry (nppcu)" ||
                section == "Slurm'"'"'s node lines from ALPS") { inblock = 1; next }
  /^```/ { inblock = 0; next }
  inblock { print }
' "$top/README.md" >"$work/examples.sh"
[ -s "$work/examples.sh" ] || { echo "no examples found in README.md"; exit 1; }

cd "$work"
n=0
failed=0
while IFS= read -r line; do
  [ -z "$line" ] && continue
  n=$((n + 1))
  cmd=${line//build\/run/$run}
  cmd=${cmd//build\//$top/build/}
  if ! out=$(bash -c "set -o pipefail; S='$run/control.sock'; $cmd" 2>&1); then
    echo "FAILED ($n): $line"
    echo "$out" | head -20
    failed=$((failed + 1))
  fi
done <"$work/examples.sh"
echo "$n README examples run, $failed failed"
[ "$failed" = 0 ]
