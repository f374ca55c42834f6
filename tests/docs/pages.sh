#!/bin/sh
# The manual pages against the code: each check takes a list from the
# sources (or the built programs) and the same list from the pages, and
# prints what one has and the other lacks.
#   pages.sh log-ids TOP      every message id basild and apbasil_proxy log
#                             (log.<level>("Bnnnn", ...)) is in basild(8)'s
#                             LOG MESSAGES with its level, and no other
#   pages.sh config-keys TOP  every key the configuration readers take
#                             (basild: basild/config/reader_sections.cc;
#                             basil-slurm: slurm/hook_config.cc) is in its
#                             page, and the page names no other
#   pages.sh commands TOP     every command of basilctl and basil-emulator is
#                             an entry of its page's COMMANDS, and no other
#   pages.sh options TOP      every option each program parses is in its page
#   pages.sh lint TOP         every page passes mandoc -Tlint with no warning
#   pages.sh versions TOP BUILD  basild, basilctl and basil-emulator --version
#                             print debian/changelog's version
set -eu
check=$1
top=$2
man=$top/man

# compare WHAT CODE PAGE: both lists, one item a line; the differences.
compare() {
  code=$(printf '%s\n' "$2" | sed '/^$/d' | sort -u)
  page=$(printf '%s\n' "$3" | sed '/^$/d' | sort -u)
  [ -n "$code" ] || { echo "$1: nothing found in the code (has its form changed?)"; return 1; }
  missing=$(printf '%s\n' "$code" | grep -vxF -e "$page" || true)
  stale=$(printf '%s\n' "$page" | grep -vxF -e "$code" || true)
  [ -z "$missing" ] || printf '%s: in the code but not in the page:\n%s\n' "$1" "$missing"
  [ -z "$stale" ] || printf '%s: in the page but not in the code:\n%s\n' "$1" "$stale"
  [ -z "$missing" ] && [ -z "$stale" ]
}

# The text of a page's section (.SH NAME up to the next .SH).
section() { sed -n "/^\.SH $2\$/,/^\.SH /p" "$1"; }
# The first word of each entry of a section: the line after each .TP,
# without its font macro, quotes and escaped dashes.
entries() {
  section "$1" "$2" | awk 'prev == ".TP" { print } { prev = $0 }' |
    sed -E 's/^\.[BIR]+ +//; s/"//g; s/\\-/-/g'
}

log_ids() {
  code=$(grep -rhoE 'log_?\.[a-z]+\("B[0-9]{4}"' "$top/basild" "$top/apbasil_proxy" |
         sed -E 's/log_?\.([a-z]+)\("(B[0-9]{4})"/\2 \1/')
  page=$(section "$man/man8/basild.8" "LOG MESSAGES" | sed -n 's/^\.B \(B[0-9]\{4\}\) \([a-z]*\)$/\1 \2/p')
  compare "basild(8) LOG MESSAGES (id level)" "$code" "$page"
}

config_keys() {
  # basild: Section s("NAME", ...) opens a table (Section s(f.key, ...) is a
  # [[reconcile.source]]); s.key("KEY", ...) and s.known("KEY") name its keys.
  code=$(awk '
    match($0, /Section s\("[a-z_]+"/) { sec = substr($0, RSTART + 11, RLENGTH - 12) }
    /Section s\(f\.key/ { sec = "reconcile.source" }
    { line = $0
      while (match(line, /s\.(key|known)\("[a-z_]+"/)) {
        k = substr(line, RSTART, RLENGTH); sub(/^s\.(key|known)\("/, "", k); sub(/"$/, "", k)
        print sec "." k; line = substr(line, RSTART + RLENGTH) } }' "$top/basild/config/reader_sections.cc")
  # basild.conf(5): .SH [section] (.SS [[reconcile.source]]), then .TP/.B key.
  page=$(awk '
    /^\.S[HS] \[\[?[a-z_.]+\]\]?$/ { sec = $2; gsub(/[][]/, "", sec); next }
    /^\.SH / { sec = "" }
    sec != "" && prev == ".TP" && /^\.B [a-z_]+$/ { print sec "." $2 }
    { prev = $0 }' "$man/man5/basild.conf.5")
  # A table read elsewhere is a key of its parent too ([reconcile] source).
  page=$(printf '%s\n%s\n' "$page" "$(printf '%s\n' "$page" | sed -n 's/^reconcile\.source\..*/reconcile.source/p')")
  compare "basild.conf(5) keys" "$code" "$page" || bad=1
  # basil-slurm: the table of {"section", "key", reader} rows; its page's
  # CONFIGURATION has .B [section] key entries.
  code=$(sed -nE 's/^ *\{"([a-z_]+)", "([a-z_]+)",.*/[\1] \2/p' "$top/slurm/hook_config.cc")
  page=$(entries "$man/man8/basil-slurm.8" CONFIGURATION)
  compare "basil-slurm(8) CONFIGURATION keys" "$code" "$page" || bad=1
  return ${bad:-0}
}

commands() {
  # basilctl: the control commands' table and the local commands main.cc runs.
  code=$(sed -nE 's/^ *\{"([a-z-]+)", "(GET|POST)".*/\1/p' "$top/basild/ctl/invocation.cc"
         grep -ohE 'inv\.command [!=]= "[a-z-]+"' "$top/basild/ctl/"*.cc | sed -E 's/.*"(.*)"/\1/')
  page=$(entries "$man/man1/basilctl.1" COMMANDS | awk '$1 !~ /^-/ { print $1 }')
  compare "basilctl(1) COMMANDS" "$code" "$page" || bad=1
  # basil-emulator: main.cc's commands (app's two), apkill, and sdb's actions.
  code=$(grep -ohE '(cmd|a) == "[a-z][a-z-]*"' "$top/emulator/main.cc" | sed -E 's/.*"(.*)"/\1/' | grep -vxE 'app|sdb'
         grep -ohE 'action == "[a-z]+"' "$top/emulator/main.cc" | sed -E 's/.*"(.*)"/app \1/'
         sed -nE 's/.*\{"([a-z]+)", \{.*/sdb \1/p' "$top/emulator/sdb_command.cc")
  page=$(entries "$man/man1/basil-emulator.1" COMMANDS)
  compare "basil-emulator(1) COMMANDS" "$code" "$page" || bad=1
  return ${bad:-0}
}

# The options a program parses, from its sources: string literals "--name"
# and "-x", and Boost.Program_options declarations, one a line
# (`("name,x", ...`); comments and #pragma lines left out.
options_of() {
  cat "$@" | grep -vE '^ *(//|#)' | grep -oE '"--?[a-zA-Z][a-zA-Z0-9-]*[=" ]' | sed -E 's/^"//; s/[=" ]$//'
  cat "$@" | sed -nE 's/^ *\("([a-z][a-z0-9-]*)(,([a-zA-Z]))?", .*/--\1 -\3/p' | tr ' ' '\n' | grep -vx -- '-'
}
# options PAGE FILE...: each option of the files appears in the page (as
# \-\-name or \-x, not followed by more of a name).
options() {
  page=$1
  shift
  missing=$(options_of "$@" | sort -u | while read -r o; do
    grep -qE -- "$(printf '%s' "$o" | sed 's/-/\\\\-/g')"'([^a-zA-Z0-9\\]|\\[^-]|$)' "$page" || echo "$o"
  done)
  [ -z "$missing" ] || { printf '%s: options not in the page:\n%s\n' "${page#"$top"/}" "$missing"; return 1; }
}

all_options() {
  options "$man/man8/basild.8" "$top/basild/daemon/main.cc" || bad=1
  options "$man/man1/basilctl.1" "$top/basild/ctl/"*.cc || bad=1
  # The emulator's positional "command" is no option; sdb's option names are a table.
  emulator=$(mktemp)
  grep -v '("command", ' "$top/emulator/main.cc" >"$emulator"
  sed -nE 's/.*kOptions\[\] = \{(.*)\};/\1/p' "$top/emulator/sdb_command.cc" | grep -oE '"[a-z-]+"' |
    sed 's/^"/"--/' >>"$emulator"
  options "$man/man1/basil-emulator.1" "$emulator" "$top/emulator/sdb_command.cc" || bad=1
  rm -f "$emulator"
  options "$man/man8/apbasil_proxy.8" "$top/apbasil_proxy/"*.cc || bad=1
  options "$man/man8/basil-slurm.8" "$top/slurm/main.cc" || bad=1
  return ${bad:-0}
}

lint() {
  command -v mandoc >/dev/null || { echo "mandoc is missing (scripts/setup.sh installs it)"; return 1; }
  out=$(find "$man" -type f -name '*.[1-8]' | sort | xargs mandoc -Tlint -W warning 2>&1 || true)
  [ -z "$out" ] || { printf '%s\n' "$out"; return 1; }
}

versions() {
  build=$1
  want=$(sed -n '1s/^basild (\([^)]*\)).*/\1/p' "$top/debian/changelog")
  for p in basild/basild basild/basilctl emulator/basil-emulator; do
    got=$("$build/$p" --version)
    [ "$got" = "${p##*/} $want" ] || { echo "$p --version: \"$got\", not \"${p##*/} $want\""; bad=1; }
  done
  return ${bad:-0}
}

case "$check" in
  log-ids) log_ids ;;
  config-keys) config_keys ;;
  commands) commands ;;
  options) all_options ;;
  lint) lint ;;
  versions) versions "$3" ;;
  *) echo "usage: pages.sh log-ids|config-keys|commands|options|lint|versions TOP [BUILD]" >&2; exit 2 ;;
esac
