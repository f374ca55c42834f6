#!/usr/bin/env bash
# The example site (conf/site) started as its README says, with the
# installed packages and Debian's Slurm and munge: the README's first shell
# block run as root in the example's directory, its second as user nobody;
# then nobody's job must have run its aprun in a reservation that basild
# made, the plugin confirmed and the epilog released.
#   example_site.sh LOG_DIR [SITE_DIR]
#     LOG_DIR   the test's output and, at the end, the daemons' logs; not
#               under a path the namespace covers (below)
#     SITE_DIR  default /usr/share/doc/basild/examples/site (the installed copy)
# scripts/packages.sh runs it while the packages are installed. As root. It
# runs in namespaces of its own (mount, network, UTS, PID): the paths the
# files name (/etc/slurm, /etc/basild, /etc/munge, /run, /tmp, /var/lib,
# /var/log, /usr/local/bin) are empty tmpfs there, the network is a loopback
# of its own (Slurm's own ports), and every daemon ends with the script.
set -euo pipefail
log=$(mkdir -p "${1:?usage: example_site.sh LOG_DIR [SITE_DIR]}" && cd "$1" && pwd)
site=$(cd "${2:-/usr/share/doc/basild/examples/site}" && pwd)
covered=(/etc/slurm /etc/basild /etc/munge /run /tmp /var/lib /var/log /usr/local/bin)

fail() {
  echo "example site: FAILED: $*" >&2
  for f in /var/log/basild/basild.out /var/log/slurm/slurmctld.log /var/log/basild/apsched.log; do
    [ -f "$f" ] && { echo "--- $f" >&2; tail -25 "$f" >&2; }
  done
  exit 1
}

if [ "${BASIL_SITE_INSIDE:-}" != 1 ]; then
  [ "$(id -u)" = 0 ] || { echo "example site: needs root" >&2; exit 1; }
  for d in "${covered[@]}"; do
    case "$log/" in "$d"/*) echo "example site: LOG_DIR $log is under $d, which the site's namespace covers" >&2; exit 2 ;; esac
  done
  for tool in unshare ip runuser setsid mungekey munged slurmctld slurmd sbatch basild basil-slurm basil-emulator; do
    command -v "$tool" >/dev/null || { echo "example site: $tool is missing" >&2; exit 1; }
  done
  exec env BASIL_SITE_INSIDE=1 unshare --mount --net --uts --pid --fork --mount-proc --propagation private \
    -- "$0" "$log" "$site"
fi

# ---------------------------------------------------------------- the host as installed
# Inside: what a fresh host with the packages has, and nothing of this one's.
hostname basil-site-test
ip link set lo up
# Slurm resolves with AI_ADDRCONFIG, which answers nothing on a host with
# loopback addresses alone: one more (TEST-NET-1, reaching nowhere).
ip addr add 192.0.2.1/32 dev lo
for d in "${covered[@]}"; do
  mount -t tmpfs -o mode=0755 tmpfs "$d"
done
chmod 1777 /tmp
# The host's name resolves, as on a host set up (munged looks it up).
{ cat /etc/hosts; echo "127.0.1.1 basil-site-test"; } >/run/hosts
mount --bind /run/hosts /etc/hosts
ln -s /run/lock /var/lock 2>/dev/null || true
# What munge's package made at its installation: its key and directories.
install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge /etc/munge
mungekey -c -k /etc/munge/munge.key
chown munge:munge /etc/munge/munge.key
install -d -o slurm -g slurm /var/lib/slurm

# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds, asking again
# every 0.2 s (Slurm's clients and basilctl have no call that waits for a
# node's state, a job's end or a release); past SECONDS, fails naming WHAT.
wait_for() {
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@"; do
    [ $SECONDS -lt $deadline ] || fail "$what"
    sleep 0.2
  done
}

copy_logs() {
  cp -r /var/log/slurm /var/log/basild "$log"/ 2>/dev/null || true
}
trap copy_logs EXIT

# The README's shell blocks, in order.
blocks=$(mktemp -d)
awk -v dir="$blocks" '
  /^```sh$/ { n++; on = 1; next }
  /^```$/   { on = 0; next }
  on        { print > (dir "/" n ".sh") }' "$site/README"
[ -s "$blocks/1.sh" ] && [ -s "$blocks/2.sh" ] || fail "the README has not its two shell blocks"
chmod 0755 "$blocks" && chmod 0644 "$blocks"/*.sh

# ---------------------------------------------------------------- set up and start, as root
(cd "$site" && bash -euo pipefail "$blocks/1.sh") >"$log/start.out" 2>&1 ||
  { cat "$log/start.out" >&2; fail "the README's first block"; }

# Every node idle (slurmd's register within seconds).
all_idle() {
  [ "$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" = 8 ] && return
  sinfo -N >"$log/sinfo.out" 2>&1 || true
  return 1
}
wait_for 60 "the eight nodes are not idle within 60 s (sinfo: $log/sinfo.out)" all_idle

# ---------------------------------------------------------------- a job, as nobody
(cd /tmp && runuser -u nobody -- bash -euo pipefail "$blocks/2.sh") >"$log/job.out" 2>&1 ||
  { cat "$log/job.out" >&2; fail "the README's second block"; }
job=$(sed -n 's/^Submitted batch job \([0-9][0-9]*\)$/\1/p' "$log/job.out")
[ -n "$job" ] || { cat "$log/job.out" >&2; fail "sbatch gave no job id"; }

# COMPLETED; any other end fails at once.
completed() {
  scontrol show job "$job" >"$log/job-record.out" 2>&1 || true
  local s
  s=$(sed -n 's/.* JobState=\([A-Z_]*\) .*/\1/p' "$log/job-record.out")
  case "$s" in
    COMPLETED) return 0 ;;
    FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE)
      cat "$log/job-record.out" >&2; fail "job $job ended $s" ;;
  esac
  return 1
}
wait_for 120 "job $job is not COMPLETED after 120 s (its record: $log/job-record.out)" completed

# The script's aprun ran in the job's reservation, on both nodes.
out=/tmp/slurm-$job.out
[ -f "$out" ] || fail "no $out"
grep -qx 'aprun=0 reservation=[0-9][0-9]*' "$out" || { cat "$out" >&2; fail "the job's aprun did not succeed"; }
resid=$(sed -n 's/^aprun=0 reservation=//p' "$out")
[ "$(grep -cx basil-site-test "$out")" = 2 ] || { cat "$out" >&2; fail "aprun -n 2 did not print the host twice"; }

# basild: the reservation made by the prolog (as slurm), confirmed by the
# plugin (root, slurmstepd), released by the epilog; nothing held after.
none_held() { basilctl --json reservations >"$log/reservations.json" && grep -Eq '"reservations": *\[\]' "$log/reservations.json"; }
wait_for 30 "basild still holds a reservation 30 s after the job ($log/reservations.json)" none_held
basilctl --json events --limit 1000 >"$log/events.json"
python3 - "$log/events.json" "$resid" "$job" <<'PY' || fail "basilctl events has not the reservation's life (above)"
import json, sys
events = json.load(open(sys.argv[1]))["events"]
resid, job = int(sys.argv[2]), sys.argv[3]
def seen(what, test):
    if not any(e.get("batch_id") == job and test(e, e.get("detail") or {}) for e in events):
        sys.exit(f"no event of job {job}: {what}")
by = lambda d, user: d.get("by", {}).get("user") == user and d["by"].get("program") == "basil-slurm"
seen("RESERVE asked by the prolog as slurm", lambda e, d: e["kind"] == "request" and d.get("request") == "reserve" and by(d, "slurm"))
seen(f"reservation {resid} made for nobody", lambda e, d: e["kind"] == "reserve" and e["reservation_id"] == resid and e["user"] == "nobody")
seen("CONFIRM asked by the plugin as root", lambda e, d: e["kind"] == "request" and d.get("request") == "confirm" and by(d, "root"))
seen(f"reservation {resid} confirmed with a container", lambda e, d: e["reservation_id"] == resid and d.get("to") == "confirmed" and d.get("pagg_id", 0) > 0)
seen("RELEASE asked by the epilog as slurm", lambda e, d: e["kind"] == "request" and d.get("request") == "release" and by(d, "slurm"))
seen(f"reservation {resid} released", lambda e, d: e["kind"] == "release" and e["reservation_id"] == resid and d.get("to") == "released")
PY

# The metrics listener and the map.
curl -fsS http://127.0.0.1:9847/metrics | grep -q '^basild_alps_nodes{' || fail "no basild_alps_nodes on the metrics listener"
basilctl nodestat >"$log/nodestat.txt" || fail "basilctl nodestat"
echo "example site: job $job ran aprun in reservation $resid, confirmed and released; logs in $log"
