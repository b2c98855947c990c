#!/usr/bin/env bash
# Part of opsbot's test suite (see start-synapse.sh / ../watch-servers.sh).
# Stop homeservers started by start-synapse.sh.
# Usage: stop-synapse.sh DATA_DIR [DATA_DIR...]
# Signals only processes whose command line names DATA_DIR/synapse.pid (start-synapse.sh puts it
# there), found by that alone and not by the pid file's contents: a start stopped between
# launching the server and writing its pid is cleaned up too. Idempotent.
set -uo pipefail
# shellcheck source=../openstack/processes.sh
source "$(dirname "${BASH_SOURCE[0]}")/../openstack/processes.sh"
rc=0
for d in "$@"; do
  [[ -d $d ]] || continue
  d=$(cd "$d" && pwd)
  pf=$d/synapse.pid
  members() { ps -eo pid=,args= | awk -v f="opsbot-pidfile=$pf " 'index($0 " ", f) && /synapse\.app\.homeserver/ { print $1 }'; }
  mapfile -t pids < <(members)
  if (( ${#pids[@]} > 0 )); then
    terminate 10 members || rc=1
    echo "stopped synapse (pid ${pids[*]})" >&2
  fi
  rm -f "$pf" "$d/synapse.mode"
done
exit $rc
