#!/usr/bin/env bash
# Part of opsbot's test suite: tests/src/openstack.rs runs it (once per test
# binary) to give the tests a real Placement; it also works by hand.
# Start a real OpenStack Placement API (PyPI openstack-placement) on loopback,
# backed by SQLite, under gunicorn. Idempotent: if an instance from the same
# DATA_DIR is already up on PORT, it just prints its PID again.
#
# Usage: start-placement.sh PORT DATA_DIR   (or --install-only: the venv and the template)
#   stdout: the PID of the gunicorn master (only that; logs go to stderr)
#   stop:   kill -TERM "$(cat DATA_DIR/placement.pid)"
#
# Environment (all optional):
#   PLACEMENT_VENV         venv to use/create   (default target/openstack/venv-placement of this checkout,
#                          where the Rust tests keep it too)
#   PLACEMENT_VERSION      openstack-placement  (default 16.0.0)
#   PLACEMENT_AUTH         noauth2 | keystone   (default noauth2; token "admin" = admin)
#   PLACEMENT_KEYSTONE_URL keystone base URL for auth=keystone, e.g. http://127.0.0.1:15000
#   PLACEMENT_SERVICE_PASSWORD password of the 'placement' service user (auth=keystone)
#   PLACEMENT_TOKEN_CACHE_TIME seconds keystonemiddleware trusts a validated token (default -1:
#                          never, so a revoked or expired token is refused at once, as tests expect)
#   PLACEMENT_WAIT         seconds to wait for the API to answer (default 60)
#   PYTHON                 interpreter used to create the venv (default python3)
#   PIP_CONSTRAINTS        constraints file (default: placement-constraints.txt next to this script, if present)
set -euo pipefail

die() { echo "start-placement: $*" >&2; exit 1; }
log() { echo "start-placement: $*" >&2; }

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=processes.sh
source "$HERE/processes.sh"
start_args "$@"
VERSION=${PLACEMENT_VERSION:-16.0.0}
VENV=${PLACEMENT_VENV:-$HERE/../../target/openstack/venv-placement}
AUTH=${PLACEMENT_AUTH:-noauth2}
WAIT=${PLACEMENT_WAIT:-60}
PY=${PYTHON:-python3}
CONSTRAINTS=${PIP_CONSTRAINTS:-$HERE/placement-constraints.txt}
PIDFILE=$DATA_DIR/placement.pid
MODEFILE=$DATA_DIR/placement.mode   # what the running instance was started with
MODE="$VERSION $AUTH ${PLACEMENT_KEYSTONE_URL:-} ${PLACEMENT_TOKEN_CACHE_TIME:--1}"
LOGFILE=$DATA_DIR/placement.log
URL=http://127.0.0.1:$PORT/

for t in curl setsid ps awk; do command -v $t >/dev/null || die "$t is required"; done
# shellcheck source=venv.sh
source "$HERE/venv.sh"

answers() { # GET / must return the placement version document
  curl -fsS --max-time 2 "$URL" 2>/dev/null | grep -q '"min_version"'
}
ours() { alive "$1" && tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null | grep -q 'gunicorn.*placement.wsgi.api'; }


# ---- already running? -------------------------------------------------------
if [[ -s $PIDFILE ]]; then
  OLD=$(cat "$PIDFILE")
  if ours "$OLD" && answers && [[ $(cat "$MODEFILE" 2>/dev/null) == "$MODE" ]]; then
    log "already running (pid $OLD) on $URL"
    echo "$OLD"; exit 0
  fi
  stop_group "$OLD"
  rm -f "$PIDFILE"
fi
if curl -sS --max-time 2 -o /dev/null "$URL" 2>/dev/null; then
  die "port $PORT is already in use by another process"
fi

# ---- venv (installed once, guarded by a lock for parallel CI jobs) ----------
install_once openstack-placement "$VERSION"

# ---- the template: the schema, once per venv ---------------------------------
# placement-manage imports all of Placement (seconds of CPU, far more on a busy machine): the
# schema is made once, into a template database every start copies.
TEMPLATE=$VENV/template-$VERSION
if [[ ! -s $TEMPLATE/placement.db ]]; then
  NEW=$(mktemp -d "$TEMPLATE.new.XXXXXX")
  printf '[placement_database]\nconnection = sqlite:///%s/placement.db\n' "$NEW" > "$NEW/placement.conf"
  OS_PLACEMENT_CONFIG_DIR=$NEW "$VENV/bin/placement-manage" --config-file "$NEW/placement.conf" \
    db sync > "$NEW/placement-manage.log" 2>&1 \
    || { tail -n 30 "$NEW/placement-manage.log" >&2; rm -rf "$NEW"; die "placement-manage db sync failed"; }
  # another start may have made it meanwhile: theirs is as good, and `mv -T` never nests
  mv -T "$NEW" "$TEMPLATE" 2>/dev/null || rm -rf "$NEW"
fi
[[ -z $INSTALL_ONLY ]] || exit 0

# ---- config; the schema from the template ------------------------------------
CONF=$DATA_DIR/placement.conf
{
  echo "[DEFAULT]"
  echo "debug = false"
  echo "[api]"
  echo "auth_strategy = $AUTH"
  echo "[placement_database]"
  echo "connection = sqlite:///$DATA_DIR/placement.db"
  if [[ $AUTH == keystone ]]; then
    [[ -n ${PLACEMENT_KEYSTONE_URL:-} ]] || die "PLACEMENT_KEYSTONE_URL is required for auth=keystone"
    cat <<KS
[keystone_authtoken]
www_authenticate_uri = $PLACEMENT_KEYSTONE_URL/v3
auth_url = $PLACEMENT_KEYSTONE_URL/v3
auth_type = password
project_domain_name = Default
user_domain_name = Default
project_name = service
username = placement
password = ${PLACEMENT_SERVICE_PASSWORD:-placement-secret}
service_token_roles_required = true
token_cache_time = ${PLACEMENT_TOKEN_CACHE_TIME:--1}
KS
  fi
} > "$CONF"
# a data dir of an earlier start keeps its database
[[ -s $DATA_DIR/placement.db ]] || cp -a "$TEMPLATE/placement.db" "$DATA_DIR/"

# ---- start ------------------------------------------------------------------
# One worker: SQLite refuses a second writer at once ("database is locked"), where a
# transaction turns from reading to writing.
GARGS=(--workers 1 --bind "127.0.0.1:$PORT" --pid "$PIDFILE" --access-logfile - --timeout 60)
"$VENV/bin/gunicorn" --help 2>/dev/null | grep -q -- --no-control-socket && GARGS+=(--no-control-socket)
: > "$LOGFILE"
OS_PLACEMENT_CONFIG_DIR=$DATA_DIR setsid nohup "$VENV/bin/gunicorn" "${GARGS[@]}" \
  placement.wsgi.api:application >>"$LOGFILE" 2>&1 < /dev/null &
PID=$!   # setsid does not fork here (non-interactive shell), so this is the gunicorn master

deadline=$(( SECONDS + WAIT ))
until answers; do
  if ! alive "$PID" && ! { [[ -s $PIDFILE ]] && alive "$(cat "$PIDFILE")"; }; then
    tail -n 40 "$LOGFILE" >&2; rm -f "$PIDFILE"; die "gunicorn exited during start-up (log: $LOGFILE)"
  fi
  if (( SECONDS >= deadline )); then
    tail -n 40 "$LOGFILE" >&2; kill -TERM "$PID" 2>/dev/null || true; rm -f "$PIDFILE"
    die "no answer on $URL within ${WAIT}s"
  fi
  sleep 0.1
done
[[ -s $PIDFILE ]] && PID=$(cat "$PIDFILE")   # written by gunicorn itself
echo "$PID" > "$PIDFILE"
echo "$MODE" > "$MODEFILE"
log "placement $VERSION ($AUTH) up on $URL pid $PID, log $LOGFILE"
echo "$PID"
