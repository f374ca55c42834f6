# Sourced by the shell tests that start a program in the background: a
# scratch directory, $work, and at exit the program whose pid is in $pid
# (if any) stopped and waited for, then $work removed.
#   . tests/support/scratch.sh NAME
work=$(mktemp -d "${TMPDIR:-/tmp}/basil-$1-XXXXXX")
pid=
scratch_cleanup() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap scratch_cleanup EXIT
