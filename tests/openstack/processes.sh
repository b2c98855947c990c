# Process helpers shared by the start and stop scripts of the test servers (start-keystone.sh,
# start-placement.sh, stop-openstack.sh, ../matrix/start-synapse.sh, ../matrix/stop-synapse.sh;
# sourced, not run). The start scripts set PIDFILE and the die and log functions they use.

# The start scripts' arguments: `PORT DATA_DIR`, or `--install-only` (the venv and the template,
# which .ci/run makes while cargo compiles the tests). Sets INSTALL_ONLY, PORT and DATA_DIR
# (created, absolute).
start_args() {
  if [[ $# -eq 1 && $1 == --install-only ]]; then
    INSTALL_ONLY=1
    set -- 0 "${TMPDIR:-/tmp}"
  else
    INSTALL_ONLY=
    [[ $# -eq 2 ]] || die "usage: $0 PORT DATA_DIR | $0 --install-only"
    [[ $1 =~ ^[0-9]+$ && $1 -gt 0 && $1 -lt 65536 ]] || die "bad port: $1"
  fi
  PORT=$1
  mkdir -p "$2"
  DATA_DIR=$(cd "$2" && pwd)
}

# Running and not a zombie (containers without an init do not reap).
alive() {
  [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null || return 1
  local st; st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1) || return 0
  [[ $st != Z ]]
}

# Stop what is left of an earlier instance: the gunicorn master runs under
# setsid, so it and its workers share process group == master pid. Only
# processes of that group whose command line names this DATA_DIR are touched.
group_members() {
  [[ ${1:-} =~ ^[0-9]+$ ]] || return 0
  ps -eo pid=,pgid=,args= | awk -v g="$1" -v f="$PIDFILE" '$2 == g && index($0, f) { print $1 }'
}
stop_group() {
  local pids; mapfile -t pids < <(group_members "$1")
  (( ${#pids[@]} > 0 )) || return 0
  log "stopping previous instance (pids ${pids[*]})"
  terminate 5 group_members "$1" || true
}

# terminate SECONDS LISTER [ARG...]: SIGTERM to the pids that `LISTER ARG...` prints, then
# SIGKILL to those it still prints SECONDS later; false when any needed SIGKILL. (The stop
# scripts use it too: one way to stop a server, whoever stops it.)
terminate() {
  local seconds=$1; shift
  local pids; mapfile -t pids < <("$@")
  (( ${#pids[@]} > 0 )) || return 0
  kill -TERM "${pids[@]}" 2>/dev/null
  for _ in $(seq $((seconds * 10))); do [[ -n $("$@") ]] || return 0; sleep 0.1; done
  mapfile -t pids < <("$@")
  (( ${#pids[@]} == 0 )) || { kill -KILL "${pids[@]}" 2>/dev/null; return 1; }
}
