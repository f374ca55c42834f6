#!/usr/bin/env bash
# The full fault and crash campaign: the hardening integration tests
# with the issue's numbers instead of the short ones ctest runs.
#   bench/crash_campaign.sh [ROUNDS] [JOBS] [FAULT_CALLS] [LINK_CUTS]   (defaults 20 1000 1000 50)
# Environment: BASIL_CAMPAIGN_SEED=N repeats a run (the seed is printed).
# Prints one "campaign:" line per test with its figures; exit status 1 on any
# failure. Run as root for the disk-full test (it mounts a small tmpfs).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# Only what the tests need (the daemon, basilctl, the emulator, the test binary).
[ -f "$top/build/build.ninja" ] || "$top/scripts/setup.sh" normal
cmake --build "$top/build" -j "$(nproc)" --target basild_integration_tests -- --quiet
export BASIL_CRASH_ROUNDS=${1:-20} BASIL_CRASH_JOBS=${2:-1000} BASIL_FAULT_CALLS=${3:-1000} BASIL_LINKCUT_ROUNDS=${4:-50}
echo "campaign: rounds=$BASIL_CRASH_ROUNDS jobs=$BASIL_CRASH_JOBS fault_calls=$BASIL_FAULT_CALLS link_cuts=$BASIL_LINKCUT_ROUNDS" \
     "load=$(cut -d' ' -f1-3 /proc/loadavg) cpus=$(nproc)"
exec "$top/build/tests/basild_integration_tests" \
  --gtest_filter='CrashCampaignTest.*:FaultCampaignTest.*:LinkCutCampaignTest.*:DiskFullTest.*:HostileXmlTest.*:AwkwardStringsTest.*'
