#!/usr/bin/env bash
# The include graph between the source folders: one line "FROM -> TO (N)" per
# pair of folders where N of FROM's #include "..." lines name a file of TO.
# Includes are rooted at the repository ("basild/core/x.h"), so a folder is
# the path's first two parts under basild/, emulator/, tests/ and bench/, and
# the first part elsewhere (basil_proto/include/basil_proto/x.h and
# "basil_proto/x.h" are both basil_proto).
#
#   scripts/include_graph.sh [--check] [TOP]
#
# --check prints only the edges that break the layering rules below and
# exits 1 if there is any (ctest: arrows.include_rules_hold):
#   - basild/core includes only basil_proto and basild/core, and no I/O
#     library (Asio, Beast, libssh, SQLite, libsystemd) either;
#   - basild/control_client, linked into the static apbasil_proxy, includes
#     only basil_proto, basild/asio and itself;
#   - apbasil_proxy and slurm (basil-slurm) include nothing of basild/daemon;
#   - process (basil_process, linked by every program that runs another)
#     includes only basil_proto, basild/asio and itself.
set -euo pipefail
check=0
if [ "${1:-}" = --check ]; then
  check=1
  shift
fi
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top"

folders=(basil_proto basild emulator apbasil_proxy slurm process tests bench fuzz)
existing=()
for f in "${folders[@]}"; do [ -d "$f" ] && existing+=("$f"); done

# "FILE<TAB>INCLUDE<TAB>KIND" for every include line (KIND: q for "...", a for <...>).
includes() {
  grep -rHE --include='*.cc' --include='*.h' --include='*.c' \
       '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "${existing[@]}" |
    sed -E 's/^([^:]+):[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1\t\2\tq/;
            s/^([^:]+):[[:space:]]*#[[:space:]]*include[[:space:]]*<([^>]+)>.*/\1\t\2\ta/'
}

# The folder of a path, as described above.
folder_awk='
function folder(p,   n, a) {
  n = split(p, a, "/")
  if (a[1] == "basil_proto") return "basil_proto"
  if ((a[1] == "basild" || a[1] == "emulator" || a[1] == "tests" || a[1] == "bench") && n > 2)
    return a[1] "/" a[2]
  return a[1]
}'

if [ $check = 0 ]; then
  includes | awk -F'\t' "$folder_awk"'
    $3 == "q" {
      from = folder($1); to = folder($2)
      # A quoted include that is not rooted (a generated or local header) is its own folder.
      if (to == $2) to = from
      if (from != to) count[from " -> " to]++
    }
    END { for (e in count) printf "%s (%d)\n", e, count[e] }' | sort
  exit 0
fi

includes | awk -F'\t' "$folder_awk"'
  function bad(why) { printf "%s: #include %s%s%s: %s\n", $1, ($3 == "q" ? "\"" : "<"), $2, ($3 == "q" ? "\"" : ">"), why; n++ }
  {
    from = folder($1); to = folder($2)
    if (from == "basild/core") {
      if ($3 == "q" && to != "basil_proto" && to != "basild/core")
        bad("basild/core includes only basil_proto and basild/core")
      if ($3 == "a" && $2 ~ /^(boost\/(asio|beast)|libssh\/|sqlite3\.h|systemd\/)/)
        bad("basild/core uses no I/O library")
    }
    if (from == "basild/control_client" && $3 == "q" &&
        to != "basil_proto" && to != "basild/asio" && to != "basild/control_client")
      bad("the control client (static apbasil_proxy) includes only basil_proto and basild/asio")
    if ((from == "apbasil_proxy" || from == "slurm") && $3 == "q" && to == "basild/daemon")
      bad(from " includes nothing of basild/daemon")
    if (from == "process" && $3 == "q" && to != "basil_proto" && to != "basild/asio" && to != "process")
      bad("process includes only basil_proto, basild/asio and itself")
  }
  END { exit n > 0 }'
