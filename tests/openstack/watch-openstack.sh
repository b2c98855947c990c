#!/usr/bin/env bash
# Part of opsbot's test suite: tests/src/openstack.rs starts one per test
# binary, before it starts Keystone and Placement, so that the servers never
# outlive the test process that wanted them.
#
# Usage: watch-openstack.sh RUN_DIR   (stdin: a pipe from the test process)
#
# The test process holds the write end of our stdin for its whole life and
# never closes it; the kernel closes it when that process ends, however it
# ends (normal exit, panic, Ctrl-C, SIGKILL). So end-of-file here means "the
# owner is gone": no polling, no pid that could be reused. Then every server
# under RUN_DIR/*/ is stopped (stop-openstack.sh) and RUN_DIR is removed.
#
# Lines read meanwhile:
#   script PGID   a start script now runs in its own process group PGID
#   done PGID     it has finished
# Scripts still running at end-of-file are terminated first, so that none
# starts a server after the clean-up.
set -uo pipefail

RUN_DIR=${1:?usage: watch-openstack.sh RUN_DIR}
[[ $RUN_DIR =~ /run-[0-9]+$ ]] || { echo "watch-openstack: refusing to watch $RUN_DIR" >&2; exit 2; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Ctrl-C or a hang-up aimed at the test run must not stop us before we clean
# up: only end-of-file decides.
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
  # a script stopped just after launching gunicorn: give gunicorn the moment
  # it needs to write the pid file that stop-openstack.sh goes by
  sleep 3
fi
shopt -s nullglob
dirs=("$RUN_DIR"/*/)
(( ${#dirs[@]} == 0 )) || "$HERE/stop-openstack.sh" "${dirs[@]}"
rm -rf -- "$RUN_DIR"
echo "watch-openstack: $(date -u +%FT%TZ) cleaned up $RUN_DIR" >&2
