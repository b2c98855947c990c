#!/usr/bin/env bash
# Part of opsbot's test suite: tests/src/servers.rs starts one per test binary and kind of
# server (Keystone and Placement, Synapse), before it starts any, so that the servers never
# outlive the test process that wanted them.
#
# Usage: watch-servers.sh RUN_DIR STOP_SCRIPT GRACE   (stdin: a pipe from the test process)
#
# The test process holds the write end of our stdin for its whole life and never closes it;
# the kernel closes it when that process ends, however it ends (normal exit, panic, Ctrl-C,
# SIGKILL). So end-of-file here means "the owner is gone": no polling, no pid that could be
# reused. Then every server under RUN_DIR/*/ is stopped (STOP_SCRIPT DIR...) and RUN_DIR is
# removed.
#
# Lines read meanwhile:
#   script PGID   a start script now runs in its own process group PGID
#   done PGID     it has finished
# Scripts still running at end-of-file are terminated first, so that none starts a server
# after the clean-up; then GRACE seconds pass before STOP_SCRIPT runs (gunicorn needs a moment
# to write the pid file stop-openstack.sh goes by; stop-synapse.sh needs none).
set -uo pipefail

RUN_DIR=${1:?usage: watch-servers.sh RUN_DIR STOP_SCRIPT GRACE}
STOP=${2:?usage: watch-servers.sh RUN_DIR STOP_SCRIPT GRACE}
GRACE=${3:?usage: watch-servers.sh RUN_DIR STOP_SCRIPT GRACE}
[[ $RUN_DIR =~ /run-[0-9]+$ ]] || { echo "watch-servers: refusing to watch $RUN_DIR" >&2; exit 2; }
[[ $GRACE =~ ^[0-9]+$ ]] || { echo "watch-servers: bad grace $GRACE" >&2; exit 2; }

# Ctrl-C or a hang-up aimed at the test run must not stop us before we clean up: only
# end-of-file decides.
trap '' INT HUP

declare -A running=()
while read -r what pgid; do
  [[ $pgid =~ ^[0-9]+$ ]] || continue
  case $what in
    script) running[$pgid]=1 ;;
    done) unset "running[$pgid]" ;;
  esac
done

if (( ${#running[@]} > 0 )); then
  for g in "${!running[@]}"; do kill -TERM -- "-$g" 2>/dev/null; done
  (( GRACE == 0 )) || sleep "$GRACE"
fi
shopt -s nullglob
dirs=("$RUN_DIR"/*/)
(( ${#dirs[@]} == 0 )) || "$STOP" "${dirs[@]}"
rm -rf -- "$RUN_DIR"
echo "watch-servers: $(date -u +%FT%TZ) cleaned up $RUN_DIR" >&2
