#!/usr/bin/env bash
# The full fault and crash campaign: the hardening integration tests
# with the issue's numbers instead of the short ones ctest runs.
#   bench/crash_campaign.sh [ROUNDS] [JOBS] [FAULT_CALLS] [LINK_CUTS]   (defaults 20 1000 1000 50)
# Environment: BASIL_CAMPAIGN_SEED=N repeats a run (the seed is printed).
# Prints one "campaign:" line per test with its figures; exit status 1 on any
# failure, or when a process the campaign started (a basild, an apbasil or
# emulator, a proxy, an sshd) is still running 10 s after the tests ended:
# everything it starts runs under a TMPDIR of its own, which such a
# process's command line names. Run as root for the disk-full test (it
# mounts a small tmpfs).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# Only what the tests need (the daemon, basilctl, the emulator, the test binary).
[ -f "$top/build/build.ninja" ] || "$top/scripts/setup.sh" normal
cmake --build "$top/build" -j "$(nproc)" --target basild_integration_tests -- --quiet
export BASIL_CRASH_ROUNDS=${1:-20} BASIL_CRASH_JOBS=${2:-1000} BASIL_FAULT_CALLS=${3:-1000} BASIL_LINKCUT_ROUNDS=${4:-50}
echo "campaign: rounds=$BASIL_CRASH_ROUNDS jobs=$BASIL_CRASH_JOBS fault_calls=$BASIL_FAULT_CALLS link_cuts=$BASIL_LINKCUT_ROUNDS" \
     "load=$(cut -d' ' -f1-3 /proc/loadavg) cpus=$(nproc)"
campaign_tmp=$(mktemp -d "${TMPDIR:-/tmp}/basil-campaign-XXXXXX")
status=0
TMPDIR=$campaign_tmp "$top/build/tests/basild_integration_tests" \
  --gtest_filter='CrashCampaignTest.*:FaultCampaignTest.*:LinkCutCampaignTest.*:DiskFullTest.*:HostileXmlTest.*:AwkwardStringsTest.*:ChildrenIntegrationTest.*:StopIntegrationTest.*' \
  || status=1

# The processes whose command line names the campaign's directory.
left_over() {
  local p cmd
  for p in /proc/[0-9]*; do
    cmd=$( { tr '\0' ' ' < "$p/cmdline"; } 2>/dev/null) || continue
    case $cmd in *"$campaign_tmp"*) echo "${p#/proc/} $cmd" ;; esac
  done
}
for _ in $(seq 100); do
  [ -z "$(left_over)" ] && break
  sleep 0.1
done
left=$(left_over)
if [ -n "$left" ]; then
  echo "campaign: FAILED: processes left running after the tests:" >&2
  echo "$left" >&2
  echo "$left" | while read -r pid _; do kill -KILL "$pid" 2>/dev/null || true; done
  status=1
else
  echo "campaign: no process left running"
fi
rm -rf "$campaign_tmp"
exit $status
