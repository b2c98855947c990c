#!/usr/bin/env bash
# Part of opsbot's test suite: tests/src/matrix/ starts one per test binary, before it starts
# Synapse, so that the homeserver never outlives the test process that wanted it. The same
# watchdog as ../openstack/watch-openstack.sh (which says why a pipe), stopping homeservers.
#
# Usage: watch-synapse.sh RUN_DIR   (stdin: a pipe from the test process)
#
# End-of-file on stdin means the test process is gone: every homeserver under RUN_DIR/*/ is
# stopped (stop-synapse.sh) and RUN_DIR is removed. Lines read meanwhile:
#   script PGID   a start script now runs in its own process group PGID
#   done PGID     it has finished
# Scripts still running at end-of-file are terminated first, so that none starts a server
# after the clean-up.
set -uo pipefail

RUN_DIR=${1:?usage: watch-synapse.sh RUN_DIR}
[[ $RUN_DIR =~ /run-[0-9]+$ ]] || { echo "watch-synapse: refusing to watch $RUN_DIR" >&2; exit 2; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

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

# (no grace period after this, unlike for gunicorn: stop-synapse.sh finds a server by its
# command line, whether or not its pid file was written yet)
for g in "${!running[@]}"; do kill -TERM -- "-$g" 2>/dev/null; done
shopt -s nullglob
dirs=("$RUN_DIR"/*/)
(( ${#dirs[@]} == 0 )) || "$HERE/stop-synapse.sh" "${dirs[@]}"
rm -rf -- "$RUN_DIR"
echo "watch-synapse: $(date -u +%FT%TZ) cleaned up $RUN_DIR" >&2
