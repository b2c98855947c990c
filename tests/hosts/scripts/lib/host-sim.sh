# Sourced by the launcher and by every fake: where a simulated host keeps its state, how an
# absolute path of the real host maps into it, and the per-host log.
#
# The launcher exports SIM_DIR (the install directory), SIM_HOST, HOST_ROOT (the host's
# directory, which stands for its `/`) and SIM_SYSTEM_PATH (the PATH of whoever ran the
# launcher). Inside `docker exec`, the docker fake also exports SIM_CONTAINER.

: "${SIM_DIR:?run this through the testhost launcher}"
: "${SIM_HOST:?run this through the testhost launcher}"
: "${HOST_ROOT:?run this through the testhost launcher}"
: "${SIM_SYSTEM_PATH:?run this through the testhost launcher}"

# Bookkeeping that is not part of the host's file tree: log, process table, containers, switches.
SIM_STATE="$HOST_ROOT/.sim"
# What programs on the host find: per-host stubs (uninstalled or hanging programs) first, then
# the fakes, then the few harmless system programs of $SIM_DIR/sys. Nothing else of the
# machine running the tests is reachable by name.
# shellcheck disable=SC2034 # used by the scripts that source this one
SIM_HOST_PATH="$SIM_STATE/bin:$SIM_DIR/fakes:$SIM_DIR/sys"
# Inside a container the container-only fakes (virsh, mistral-db-manage) are found too.
# shellcheck disable=SC2034 # used by the scripts that source this one
SIM_CONTAINER_PATH="$SIM_STATE/bin:$SIM_DIR/fakes/container:$SIM_DIR/fakes:$SIM_DIR/sys"
# The fakes' own plumbing (date, sleep, mkdir, cat) is the real system's.
PATH="$SIM_SYSTEM_PATH"

# Appends a line to the host's log and to the journal of all hosts.
sim_log() {
    printf '%s\n' "$*" >>"$SIM_STATE/log"
    printf '%s %s\n' "$SIM_HOST" "$*" >>"$SIM_DIR/journal"
}

# Records what a command changed on the host, as `=> what`.
sim_changed() {
    sim_log "=> $*"
}

# The loud refusal of arguments a fake does not model: `sim_unsupported <prog> <args…>`.
sim_unsupported() {
    local prog=$1
    shift
    echo "fake $prog: unsupported arguments: $*" >&2
    exit 2
}

# Prints the file that stands for absolute path $1 of the host (or, inside a container, of the
# container; /sys and /proc are the host kernel's in both). Fails for relative paths, `..` and
# the simulator's own bookkeeping.
host_path() {
    local path=$1
    case "$path" in
    /*) ;;
    *) return 1 ;;
    esac
    case "$path/" in
    */../* | /.sim/*) return 1 ;;
    esac
    if [[ -n ${SIM_CONTAINER:-} && $path != /sys/* && $path != /proc/* ]]; then
        printf '%s\n' "$SIM_STATE/containers/$SIM_CONTAINER/rootfs$path"
    else
        printf '%s\n' "$HOST_ROOT$path"
    fi
}
