#!/usr/bin/env bash
# `cmake --install` into an empty prefix, then the installed programs work
# together: the installed basild against the installed emulator (as its
# apbasil) until the installed basilctl reports health with an inventory, and
# a QUERY through the installed apbasil_proxy. Nothing of the build tree runs.
#   install_test.sh BUILD_DIR
set -uo pipefail
build=$(cd "${1:?usage: install_test.sh BUILD_DIR}" && pwd)
. "$(dirname "$0")/../support/scratch.sh" install
prefix="$work/prefix"
fail() {
  echo "FAILED: $*"
  [ -f "$work/basild.out" ] && { echo "--- basild's output:"; tail -30 "$work/basild.out"; }
  exit 1
}

cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install"; }

# Every program, the gateway's source, the manual pages, the examples and
# the systemd unit (naming the installed basild).
for f in sbin/basild sbin/apbasil_proxy sbin/apkill_proxy sbin/basil-slurm bin/basilctl bin/basil-emulator \
         libexec/basild/apbasil_proxy-fallback libexec/basild/basil_gateway; do
  [ -x "$prefix/$f" ] || fail "$f is not installed"
done
# The layout is the Debian packages' (cmake/BasilInstall.cmake): each
# package's examples in share/doc/PACKAGE/.
for f in share/doc/apbasil-proxy/basil_gateway.c share/man/man1/basilctl.1 share/man/man1/basil-emulator.1 \
         share/man/man5/basild.conf.5 share/man/man8/basild.8 share/man/man8/apbasil_proxy.8 \
         share/man/man8/apkill_proxy.8 share/man/man8/basil-slurm.8 \
         share/doc/basil-slurm/examples/basil-slurm.conf share/doc/basild/examples/basild.conf share/doc/basild/examples/failover/basild.conf \
         share/doc/basild/examples/prometheus/basild-alerts.yml share/doc/basild/examples/prometheus/basild-alerts.test.yml \
         share/doc/basild/examples/prometheus/prometheus.yml share/bash-completion/completions/basilctl \
         share/doc/basild/examples/site/README share/doc/basild/examples/site/slurm.conf \
         share/doc/apbasil-proxy/examples/apbasil_proxy.conf share/doc/apbasil-proxy/examples/cray.conf \
         share/doc/basil-emulator/examples/emulator-system.example lib/systemd/system/basild.service; do
  [ -f "$prefix/$f" ] || fail "$f is not installed"
done
[ "$(readlink "$prefix/share/man/man8/apkill_proxy.8")" = apbasil_proxy.8 ] || fail "apkill_proxy.8 is no link to apbasil_proxy.8"
grep -q "^ExecStart=$prefix/sbin/basild " "$prefix/lib/systemd/system/basild.service" ||
  fail "basild.service does not start $prefix/sbin/basild"
[ ! -e "$prefix/bin/apbasil" ] || fail "the emulator's apbasil link is installed"

"$prefix/bin/basil-emulator" init --preset tds-8 --state "$work/emulator" >"$work/init.log" 2>&1 ||
  { cat "$work/init.log"; fail "basil-emulator init"; }
conf="$work/basild.conf"
cat >"$conf" <<CONF
[apbasil]
path = "$prefix/bin/basil-emulator"
args = ["--state", "$work/emulator"]

[reconcile]
apkill = "$prefix/bin/basil-emulator"
apkill_args = ["--state", "$work/emulator", "apkill"]

[state]
database = "$work/state.db"

[control]
socket = "$work/control.sock"

[log]
directory = "$work/log"
CONF
mkdir -p "$work/log"
"$prefix/sbin/basild" --check-config --config "$conf" >"$work/check.log" 2>&1 ||
  { cat "$work/check.log"; fail "basild --check-config"; }

"$prefix/sbin/basild" --config "$conf" >"$work/basild.out" 2>&1 &
pid=$!
ctl() { "$prefix/bin/basilctl" --socket "$work/control.sock" --timeout 5 "$@"; }
# Healthy, with ALPS reached and an inventory: polled against a deadline.
deadline=$((SECONDS + 60))
healthy=0
while [ $SECONDS -lt $deadline ]; do
  kill -0 "$pid" 2>/dev/null || fail "basild ended"
  if health=$(ctl --json health 2>/dev/null) &&
     grep -Eq '"alps_reachable": *true' <<<"$health" &&
     grep -Eq '"inventory_age_s": *[0-9]' <<<"$health"; then
    healthy=1
    break
  fi
  sleep 0.1
done
[ $healthy = 1 ] || fail "basilctl health never reported an inventory: $(ctl --json health 2>&1)"

# A QUERY through the installed proxy, to the installed basild (its socket
# named by the environment, its limits from what basild published).
reply=$(echo '<BasilRequest protocol="1.3" method="QUERY" type="INVENTORY"/>' |
        APBASIL_PROXY_SOCKET="$work/control.sock" "$prefix/sbin/apbasil_proxy" 2>"$work/proxy.err") ||
  { cat "$work/proxy.err"; fail "apbasil_proxy exited $?"; }
grep -q 'status="SUCCESS"' <<<"$reply" && grep -q "<Inventory" <<<"$reply" ||
  fail "apbasil_proxy's QUERY INVENTORY: $reply"

kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc = 0 ] || fail "basild exited $rc after SIGTERM"

# basild stopped: the installed proxy finds its installed fallback, which
# reads basild's configuration (named in what basild published) and, with
# no ssh conduit there, answers a FAILURE saying so.
reply=$(echo '<BasilRequest protocol="1.3" method="QUERY" type="ENGINE"/>' |
        APBASIL_PROXY_SOCKET="$work/control.sock" "$prefix/sbin/apbasil_proxy" 2>"$work/proxy.err")
grep -q 'status="FAILURE"' <<<"$reply" && grep -q "no ssh conduit is configured" <<<"$reply" ||
  { cat "$work/proxy.err"; fail "apbasil_proxy without basild: $reply"; }
echo "installed: $(cd "$prefix" && find . -type f | wc -l) files; basild, basilctl, basil-emulator and apbasil_proxy from the prefix work"
