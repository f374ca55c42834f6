#!/usr/bin/env bash
# Drives the embedded emulator (an emulated 2256-node XC30) the way a
# scheduler drives apbasil, and decodes every answer with basilctl.
# Replaced by "basild on the emulator" when the daemon lands (issue 4).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin="$top/build"
state=${BASIL_EMULATOR_STATE:-"$top/build/demo-state"}
export BASIL_EMULATOR_STATE="$state"
apbasil="$bin/emulator/apbasil"
decode() { "$bin/basild/basilctl" decode -; }
call() {  # call NAME XML: one apbasil call, timed, decoded
  local name=$1 xml=$2 t0 t1 out
  t0=$(date +%s%N)
  out=$(printf '%s' "$xml" | "$apbasil")
  t1=$(date +%s%N)
  printf '%-34s %6.1f ms  %s\n' "$name" "$(( (t1 - t0) / 1000 ))e-3" "$(printf '%s' "$out" | decode)"
  LAST="$out"
}

"$bin/emulator/basil-emulator" init --preset xc30-2256 --state "$state" --force >/dev/null
echo "emulated system: xc30-2256 (state in $state)"
call "QUERY ENGINE (1.0)" '<BasilRequest protocol="1.0" method="QUERY" type="ENGINE"/>'
call "QUERY SUMMARY (1.3)" '<BasilRequest protocol="1.3" method="QUERY" type="SUMMARY"/>'
call "QUERY INVENTORY (1.3)" '<BasilRequest protocol="1.3" method="QUERY" type="INVENTORY"/>'
call "RESERVE 2050 nodes x 32 (1.3)" '<BasilRequest protocol="1.3" method="RESERVE"><ReserveParamArray user_name="demo" batch_id="1001"><ReserveParam architecture="XT" width="65600" depth="1" nppn="32" nppcu="0"/></ReserveParamArray></BasilRequest>'
resid=$(printf '%s' "$LAST" | sed -n 's/.*reservation_id="\([0-9]*\)".*/\1/p' | head -n1)
call "CONFIRM $resid (1.3)" "<BasilRequest protocol=\"1.3\" method=\"CONFIRM\" reservation_id=\"$resid\" pagg_id=\"4242\"/>"
call "QUERY INVENTORY, reservations only" '<BasilRequest protocol="1.3" method="QUERY" type="INVENTORY"><Inventory><ReservationArray/></Inventory></BasilRequest>'
call "RELEASE $resid (1.3)" "<BasilRequest protocol=\"1.3\" method=\"RELEASE\" reservation_id=\"$resid\"/>"
call "RELEASE $resid again" "<BasilRequest protocol=\"1.3\" method=\"RELEASE\" reservation_id=\"$resid\"/>"
