# The venv helper shared by start-keystone.sh, start-placement.sh and ../matrix/start-synapse.sh
# (sourced, not run). It expects VENV, PY, CONSTRAINTS and the die and log functions to be set by
# the sourcing script.

# install_once NAME VERSION [--no-gunicorn]: NAME==VERSION and gunicorn (unless told not to: a
# server that is not a WSGI app, like Synapse, has no use for it) into VENV, once (a marker file
# says it is done; a lock keeps parallel test binaries and CI's early install from racing).
#
# uv installs: pip spent about 31 s of CPU on Keystone's 130 packages (resolving, unpacking,
# compiling every module), uv about 12 with the same bytecode compiled. CI installs both venvs
# while cargo compiles the tests on the same two cores, so that CPU came off the build. uv itself
# is a pip install into the venv (one wheel, about 2 s). Where uv cannot install (it reads no
# pip configuration: a mirror in PIP_INDEX_URL, a proxy's CA in PIP_CERT), pip does, as before.
UV_VERSION=0.13.9
install_once() {
  local name=$1 version=$2 extra=(gunicorn)
  [[ ${3:-} != --no-gunicorn ]] || extra=()
  local marker=$VENV/.$name-$version-installed
  [[ -f $marker ]] && return 0
  mkdir -p "$(dirname "$VENV")"
  exec 9>"$VENV.lock"
  command -v flock >/dev/null && flock 9
  if [[ ! -f $marker ]]; then
    log "installing $name==$version into $VENV"
    command -v "$PY" >/dev/null || die "$PY not found: Python 3.11+ (with venv and pip) is needed to install $name"
    "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
      || die "$PY is older than 3.11 (required by this release); set PYTHON=python3.11+"
    [[ -x $VENV/bin/python ]] || "$PY" -m venv "$VENV" >&2 || die "cannot create venv $VENV"
    # the pinned transitive set only matches the default release
    local c=(); grep -qx "$name==$version" "$CONSTRAINTS" 2>/dev/null && c=(-c "$CONSTRAINTS")
    local pip=("$VENV/bin/python" -m pip install -q --disable-pip-version-check)
    if ! { [[ -x $VENV/bin/uv ]] || "${pip[@]}" "uv==$UV_VERSION" >&2; } \
      || ! "$VENV/bin/uv" pip install -q --compile-bytecode --python "$VENV/bin/python" \
        "${c[@]}" "$name==$version" "${extra[@]}" >&2; then
      log "uv could not install $name; installing with pip"
      "${pip[@]}" "${c[@]}" "$name==$version" "${extra[@]}" >&2 || die "pip install failed"
    fi
    touch "$marker"
  fi
  exec 9>&-
}
