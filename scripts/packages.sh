#!/usr/bin/env bash
# The Debian packages as a site gets them, checked the way Debian and its
# admins check packages. scripts/test runs it after the suite; as root, on a
# machine where systemd need not be PID 1.
#   scripts/packages.sh [--reuse]   (--reuse: check the packages built last
#                                   time in build-deb/ again, no build)
#  1. build: the tracked tree (and new files not ignored) copied to
#     build-deb/basild-VERSION, then dpkg-buildpackage -b -us -uc as
#     Debian's builders run it, without nocheck: the build's check runs
#     the unit tests (debian/rules); the packages land in build-deb/, and
#     the copy with its build tree is removed.
#  2. lintian: any error or warning not overridden fails.
#  3. apt-get install ./*.deb, as a site does; the installed Prometheus
#     examples through promtool.
#  4. the installed basild as its unit runs it: the installed example
#     configuration pointed at the installed emulator, root, the unit's
#     umask, capability bounding set, no new privileges, and its filesystem
#     view (unshare -m: every file system read-only but StateDirectory,
#     RuntimeDirectory and LogsDirectory, /tmp and /var/tmp private):
#     --check-config, start, health, a RESERVE/CONFIRM/RELEASE cycle through
#     basilctl, SIGHUP, GET /metrics through promtool, SIGTERM.
#     systemd-analyze verify on the installed unit.
#  4b. the installed example site (examples/site) started as its README
#     says, with Debian's Slurm and munge, in namespaces of its own, and a
#     job's aprun run in its reservation (tests/install/example_site.sh).
#  5. apt-get purge: no package, file or directory of theirs is left.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build-deb
log=$out/log
packages=(basild basil-emulator apbasil-proxy basil-slurm)
start=$SECONDS

step() { echo "== packages: $* ($((SECONDS - start)) s)"; }
fail() {
  echo "packages: FAILED: $*" >&2
  [ -f "$log/basild.out" ] && { echo "--- basild's output:" >&2; tail -40 "$log/basild.out" >&2; }
  exit 1
}
[ "$(id -u)" = 0 ] || fail "needs root (it installs and purges the packages)"
for tool in dpkg-buildpackage dh lintian promtool systemd-analyze unshare setpriv readelf; do
  command -v "$tool" >/dev/null || fail "$tool is missing (scripts/setup.sh installs it)"
done

installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q ' installed$'; }
purge_all() {
  local present=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" >/dev/null 2>&1 && present+=("$p")
  done
  [ ${#present[@]} = 0 ] || DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${present[@]}" >>"$log/apt.log" 2>&1
}

# ---------------------------------------------------------------- 1. build
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
src=$out/basild-$version
if [ "${1:-}" != --reuse ]; then
  rm -rf "$out" && mkdir -p "$src" "$log"
  step "build $version from a copy of the tree"
  (cd "$top" && git ls-files -z --cached --others --exclude-standard |
     while IFS= read -r -d '' f; do [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"; done |
     tar --null -T - -cf -) | tar -xf - -C "$src"
  (cd "$src" && DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage -b -us -uc) >"$log/build.log" 2>&1 ||
    { tail -40 "$log/build.log"; fail "dpkg-buildpackage (log: $log/build.log)"; }
  rm -rf "$src"  # the copy and its build tree (1.5 GB); the packages are beside it
fi
mkdir -p "$log"
debs=()
for p in "${packages[@]}"; do
  f=$(echo "$out/${p}_${version}_"*.deb)
  [ -f "$f" ] || fail "no package $p was built"
  debs+=("$f")
done

# ---------------------------------------------------------------- 2. lintian
step "lintian"
lintian --fail-on error,warning "$out"/basild_"$version"_*.changes >"$log/lintian.log" 2>&1 ||
  { cat "$log/lintian.log"; fail "lintian has errors or warnings that are not overridden"; }
grep -E '^[EW]: ' "$log/lintian.log" && fail "lintian"

# ---------------------------------------------------------------- 3. install
step "apt-get install"
purge_all  # a run that stopped half-way
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${debs[@]}" >>"$log/apt.log" 2>&1 ||
  { tail -20 "$log/apt.log"; fail "apt-get install ./*.deb"; }
trap 'purge_all' EXIT
for p in "${packages[@]}"; do
  installed "$p" || fail "$p is not installed"
  dpkg -L "$p" >"$log/$p.files"
done
# The per-call programs are fully static by design (README): no interpreter.
for f in /usr/bin/basil-emulator /usr/sbin/apbasil_proxy /usr/sbin/apkill_proxy; do
  ! readelf -l "$f" | grep -q INTERP || fail "$f is not statically linked"
done
unit=/lib/systemd/system/basild.service
[ -f "$unit" ] && [ -f /etc/basild/basild.conf ] || fail "the unit or the configuration is not installed"
grep -q '^ExecStart=/usr/sbin/basild ' "$unit" || fail "the unit does not start /usr/sbin/basild"
dpkg-query -W -f='${Conffiles}\n' basild | grep -q '/etc/basild/basild.conf' || fail "basild.conf is no conffile"
# The Prometheus examples where a site finds them: the configuration loads
# the rules beside it, and the rules' tests pass there.
prom=/usr/share/doc/basild/examples/prometheus
{ promtool check config "$prom/prometheus.yml" && (cd "$prom" && promtool test rules basild-alerts.test.yml); } \
  >"$log/promtool-examples.log" 2>&1 || { cat "$log/promtool-examples.log"; fail "the installed Prometheus examples"; }

step "systemd-analyze verify"
systemd-analyze verify "$unit" >"$log/verify.log" 2>&1 || { cat "$log/verify.log"; fail "systemd-analyze verify $unit"; }

# ---------------------------------------------------------------- 4. run as the unit
# The unit's directories and settings, read from the installed unit.
unit_value() { sed -n "s/^$1=//p" "$unit" | tail -1; }
state_dir=/var/lib/$(unit_value StateDirectory)
runtime_dir=/run/$(unit_value RuntimeDirectory)
logs_dir=/var/log/$(unit_value LogsDirectory)
install -d -m "$(unit_value StateDirectoryMode)" "$state_dir"
install -d -m "$(unit_value RuntimeDirectoryMode)" "$runtime_dir"
install -d -m "$(unit_value LogsDirectoryMode)" "$logs_dir"
[ "$(unit_value ProtectSystem)" = strict ] || fail "the unit no longer has ProtectSystem=strict: update this test"
caps=$(unit_value CapabilityBoundingSet | tr 'A-Z ' 'a-z\n' | sed -n 's/^cap_\(.*\)/+\1/p' | paste -sd,)
umask_unit=$(unit_value UMask)

# The emulated ALPS in the state directory: apbasil writes its state, as ALPS does.
emu_state=$state_dir/emulator
basil-emulator init --preset tds-8 --state "$emu_state" >"$log/emulator-init.log" 2>&1 ||
  { cat "$log/emulator-init.log"; fail "basil-emulator init"; }
# The installed example, edited as an admin would: apbasil and apkill are
# the emulator (--check-config wants every program it names to be there),
# and the XML log is on (it writes into LogsDirectory). Its squeue is
# slurm-client's, which basil-slurm depends on.
conf=/etc/basild/basild.conf
sed -i -e 's|^#path = "/usr/bin/apbasil"$|path = "/usr/bin/basil-emulator"|' \
       -e "s|^#args = \[\]\$|args = [\"--state\", \"$emu_state\"]|" \
       -e 's|^#apkill = "/usr/bin/apkill"$|apkill = "/usr/bin/basil-emulator"|' \
       -e "s|^#apkill_args = \[\]\$|apkill_args = [\"--state\", \"$emu_state\", \"apkill\"]|" \
       -e 's|^#xml_log = false$|xml_log = true|' "$conf"
[ "$(grep -cE '^(path = "/usr/bin/basil-emulator"|args = \["--state"|apkill = "/usr/bin/basil-emulator"|apkill_args = \["--state"|xml_log = true)' "$conf")" = 5 ] ||
  fail "the example configuration no longer has the commented defaults this test edits"

# as_unit COMMAND...: COMMAND with the unit's view of the machine: a
# private mount namespace whose file systems are all read-only but the three
# directories (the API file systems /proc, /sys and /dev stay as they are),
# a private /tmp and /var/tmp, the unit's umask and capability bounding
# set, and no new privileges. unshare, sh and setpriv each become the next
# (exec): started with &, $! is the command's pid.
as_unit_script='
  set -e
  awk "{ print \$5 }" /proc/self/mountinfo | sort -u | while read -r mp; do
    case "$mp" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue ;; esac
    mount -o remount,bind,ro "$mp"
  done
  for d in "$1" "$2" "$3"; do mount --bind "$d" "$d"; mount -o remount,bind,rw "$d"; done
  mount -t tmpfs -o mode=1777 tmpfs /tmp
  mount -t tmpfs -o mode=1777 tmpfs /var/tmp
  umask "$4"
  caps=$5
  shift 5
  exec setpriv --no-new-privs --bounding-set=-all,"$caps" -- "$@"'
as_unit=(unshare --mount --propagation private -- /bin/sh -c "$as_unit_script" as_unit
         "$state_dir" "$runtime_dir" "$logs_dir" "$umask_unit" "$caps")

step "basild as the unit runs it"
# The view itself: the configuration's directory cannot be written, the state directory can.
"${as_unit[@]}" /bin/sh -c "! touch /etc/basild/probe 2>/dev/null && touch $state_dir/probe && rm $state_dir/probe" ||
  fail "the unit's filesystem view is not reproduced (/etc writable or the state directory not)"
"${as_unit[@]}" /usr/sbin/basild --config "$conf" --check-config >"$log/check-config.log" 2>&1 ||
  { cat "$log/check-config.log"; fail "basild --check-config (ExecStartPre)"; }
"${as_unit[@]}" /usr/sbin/basild --config "$conf" >"$log/basild.out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; purge_all' EXIT
ctl() { basilctl --timeout 30 "$@"; }
# ALPS reached and an INVENTORY taken. basilctl health exits 0 ok, 1
# degraded, 2 down: degraded is taken here, for the example's squeue has no
# slurmctld to ask on this machine.
healthy() {
  local h rc=0
  h=$(ctl --json health 2>/dev/null) || rc=$?
  [ $rc -le 1 ] && grep -Eq '"alps_reachable": *true' <<<"$h" && grep -Eq '"inventory_age_s": *[0-9]' <<<"$h"
}
wait_for() {  # wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@"; do
    kill -0 "$pid" 2>/dev/null || fail "basild ended while waiting for $what"
    [ $SECONDS -lt $deadline ] || fail "no $what within the deadline"
    sleep 0.1
  done
}
wait_for 60 "healthy basild with an inventory" healthy

# A reservation cycle through the installed basilctl (as a scheduler would).
reply=$(ctl --json reserve batch_id=1001 user=root 'params:=[{"width":2}]') || fail "reserve: $reply"
resid=$(sed -n 's/.*"reservation_id": *\([0-9][0-9]*\).*/\1/p' <<<"$reply")
[ -n "$resid" ] || fail "reserve answered without a reservation id: $reply"
reply=$(ctl --json confirm "$resid" 4242) && grep -Eq '"state": *"confirmed"' <<<"$reply" || fail "confirm: $reply"
reply=$(ctl --json release "$resid") && grep -Eq '"state": *"released"' <<<"$reply" || fail "release: $reply"
reply=$(ctl --json reservations) && grep -Eq '"reservations": *\[\]' <<<"$reply" ||
  fail "basild still holds a reservation: $reply"
[ -s "$state_dir/state.db" ] || fail "no state database in $state_dir"
[ -s "$logs_dir/basil_xml.log" ] || fail "no XML log in $logs_dir"

# SIGHUP: a new log level is taken (B0108), basild stays healthy.
sed -i 's|^#level = "info"$|level = "notice"|' "$conf"
kill -HUP "$pid"
wait_for 30 "reload (B0108)" grep -q B0108 "$log/basild.out"
wait_for 30 "healthy basild after SIGHUP" healthy

# Prometheus: every family with HELP and TYPE, counters ending in _total.
ctl metrics >"$log/metrics.txt" || fail "GET /metrics"
promtool check metrics <"$log/metrics.txt" >"$log/promtool.log" 2>&1 ||
  { cat "$log/promtool.log"; fail "promtool check metrics"; }
! grep -q . "$log/promtool.log" || { cat "$log/promtool.log"; fail "promtool check metrics has remarks"; }

kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=
[ $rc = 0 ] || fail "basild exited $rc after SIGTERM"

# ---------------------------------------------------------------- 4b. the example site
step "the example site as its README says"
"$top/tests/install/example_site.sh" "$log/site" >"$log/site.log" 2>&1 ||
  { cat "$log/site.log"; fail "the example site (tests/install/example_site.sh; logs in $log/site)"; }
tail -1 "$log/site.log"

# ---------------------------------------------------------------- 5. purge
step "apt-get purge"
trap - EXIT
purge_all || { tail -20 "$log/apt.log"; fail "apt-get purge"; }
for p in "${packages[@]}"; do
  ! dpkg-query -W -f='${Status}\n' "$p" >/dev/null 2>&1 || fail "$p is still known to dpkg after purge"
  while IFS= read -r f; do
    [ -d "$f" ] && continue  # shared directories (/usr/sbin, /lib) stay; their own are checked below
    [ ! -e "$f" ] && [ ! -L "$f" ] || fail "$f (of $p) is left after purge"
  done <"$log/$p.files"
done
for d in /etc/basild "$state_dir" "$logs_dir" "$runtime_dir" /usr/libexec/basild \
         /usr/share/doc/basild /usr/share/doc/apbasil-proxy /usr/share/doc/basil-emulator /usr/share/doc/basil-slurm; do
  [ ! -e "$d" ] || fail "$d is left after purge"
done
left=$(find /etc/systemd /var/lib/systemd /etc/logrotate.d -name '*basil*' 2>/dev/null || true)
[ -z "$left" ] || fail "left after purge: $left"

sizes=$(for f in "${debs[@]}"; do
  printf '%s %s KiB (installed %s KiB); ' "${f##*/}" $(($(stat -c %s "$f") / 1024)) "$(dpkg-deb -f "$f" Installed-Size)"
done)
step "done: ${sizes%; }"
