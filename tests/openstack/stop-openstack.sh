#!/usr/bin/env bash
# Part of opsbot's test suite (see start-keystone.sh / ../watch-servers.sh).
# Stop servers started by start-placement.sh / start-keystone.sh.
# Usage: stop-openstack.sh DATA_DIR [DATA_DIR...]
# Signals only the gunicorn master and workers whose command line names
# DATA_DIR/<svc>.pid (they share the master's process group). Idempotent.
set -uo pipefail
# shellcheck source=processes.sh
source "$(dirname "${BASH_SOURCE[0]}")/processes.sh"
rc=0
for d in "$@"; do
  [[ -d $d ]] || continue
  d=$(cd "$d" && pwd)
  for pf in "$d/placement.pid" "$d/keystone.pid"; do
    [[ -s $pf ]] || continue
    g=$(cat "$pf")
    [[ $g =~ ^[0-9]+$ ]] || { rm -f "$pf"; continue; }
    members() { ps -eo pid=,pgid=,args= | awk -v g="$g" -v f="$pf" '$2 == g && index($0, f) { print $1 }'; }
    mapfile -t pids < <(members)
    if (( ${#pids[@]} > 0 )); then
      terminate 10 members || rc=1
      echo "stopped $(basename "$pf" .pid) (pid $g)" >&2
    fi
    rm -f "$pf"
  done
done
exit $rc
