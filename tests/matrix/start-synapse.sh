#!/usr/bin/env bash
# Part of opsbot's test suite: tests/src/matrix/ runs it (once per test binary) to give the
# tests a real Matrix homeserver; it also works by hand.
# Start a real Synapse (PyPI matrix-synapse) on loopback: server name `localhost`, one plain
# HTTP listener on 127.0.0.1:PORT serving the client API (and the admin API under it), SQLite,
# no federation, no open registration (users are made with the shared secret, see below).
# Idempotent: a running instance from the same DATA_DIR on PORT, started with the same
# settings, is reused.
#
# Usage: start-synapse.sh PORT DATA_DIR   (or --install-only: the venv and the template)
#   stdout: the PID of the homeserver (only that; logs go to stderr, the server's to
#           DATA_DIR/homeserver.log)
#   stop:   stop-synapse.sh DATA_DIR
#   users:  POST /_synapse/admin/v1/register with an HMAC of the shared secret, or
#           register_new_matrix_user -c DATA_DIR/homeserver.yaml http://127.0.0.1:PORT
#
# Environment (all optional):
#   SYNAPSE_VENV          venv to use/create (default target/matrix/venv-synapse of this checkout,
#                         where the Rust tests keep it too)
#   SYNAPSE_VERSION       matrix-synapse version (default 1.163.2)
#   SYNAPSE_REGISTRATION_SECRET  registration_shared_secret (default opsbot-synapse-test-secret)
#   SYNAPSE_RC_MESSAGE_PER_SECOND, SYNAPSE_RC_MESSAGE_BURST
#                         rc_message, the per-user limit on sending events, creating rooms,
#                         redacting... (default Synapse's own: 0.2 a second, bursts of 10). It
#                         stays on: tests must meet real 429s. The limits on logins,
#                         registrations, joins, invites and room creation are lifted (1000 a
#                         second): they count per IP address, or per user and room, and tests
#                         that all come from 127.0.0.1 and set up rooms for every test would
#                         trip them at once; a test wanting one sets a user's own
#                         (POST /_synapse/admin/v1/users/USER/override_ratelimit).
#   SYNAPSE_BCRYPT_ROUNDS bcrypt rounds for passwords (default 4, the minimum: Synapse's 12 cost
#                         a quarter of a second of CPU per registration and per login)
#   SYNAPSE_WAIT          seconds to wait for the API (default 90)
#   PYTHON                interpreter used to create the venv (default python3)
#   PIP_CONSTRAINTS       constraints file (default synapse-constraints.txt next to this script)
set -euo pipefail

die() { echo "start-synapse: $*" >&2; exit 1; }
log() { echo "start-synapse: $*" >&2; }

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../openstack/processes.sh
source "$HERE/../openstack/processes.sh"
start_args "$@"
OPENSTACK=$HERE/../openstack
VERSION=${SYNAPSE_VERSION:-1.163.2}
VENV=${SYNAPSE_VENV:-$HERE/../../target/matrix/venv-synapse}
SECRET=${SYNAPSE_REGISTRATION_SECRET:-opsbot-synapse-test-secret}
RC_RATE=${SYNAPSE_RC_MESSAGE_PER_SECOND:-0.2}
RC_BURST=${SYNAPSE_RC_MESSAGE_BURST:-10}
ROUNDS=${SYNAPSE_BCRYPT_ROUNDS:-4}
WAIT=${SYNAPSE_WAIT:-90}
PY=${PYTHON:-python3}
CONSTRAINTS=${PIP_CONSTRAINTS:-$HERE/synapse-constraints.txt}
PIDFILE=$DATA_DIR/synapse.pid
MODEFILE=$DATA_DIR/synapse.mode   # what the running instance was started with
MODE="$VERSION $SECRET $RC_RATE $RC_BURST $ROUNDS"
LOGFILE=$DATA_DIR/homeserver.log
CONF=$DATA_DIR/homeserver.yaml
URL=http://127.0.0.1:$PORT

for t in curl setsid ps awk; do command -v $t >/dev/null || die "$t is required"; done
[[ $RC_RATE =~ ^[0-9]+(\.[0-9]+)?$ && $RC_BURST =~ ^[0-9]+$ ]] \
  || die "SYNAPSE_RC_MESSAGE_PER_SECOND must be a number, SYNAPSE_RC_MESSAGE_BURST a whole one"
# shellcheck source=../openstack/venv.sh
source "$OPENSTACK/venv.sh"

answers() { curl -fsS --max-time 2 "$URL/_matrix/client/versions" 2>/dev/null | grep -q '"versions"'; }
# The homeserver's command line names PIDFILE (a `-X` option, which Python keeps in
# sys._xoptions and otherwise ignores), so processes.sh's stop_group, which goes by it, can tell
# this data dir's server from any other.
ours() {
  alive "$1" || return 1
  local cmd; cmd=$(tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null) || return 1
  [[ $cmd == *synapse.app.homeserver* && $cmd == *"$PIDFILE"* ]]
}

# ---- venv -------------------------------------------------------------------
install_once matrix-synapse "$VERSION" --no-gunicorn

# ---- the template: a signing key and a database with the full schema ---------
# A fresh SQLite database gets Synapse's whole schema and its background updates at first start,
# and the signing key takes a Synapse import of its own (seconds of CPU each): both are made once,
# into a template every start copies. Nothing in them depends on the port or the data dir.
TEMPLATE=$VENV/template-$(printf '%s\n' "$VERSION" | sha256sum | cut -c1-16)

write_conf() { # DIR PORT: homeserver.yaml and its log config for a data dir (or the template)
  local dir=$1
  cat > "$dir/homeserver.yaml" <<CONF
# Written by start-synapse.sh at every start: edits are lost.
server_name: localhost
public_baseurl: http://127.0.0.1:$2/
listeners:
  - port: $2
    bind_addresses: ['127.0.0.1']
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: $dir/homeserver.db
log_config: $dir/log.config
media_store_path: $dir/media_store
signing_key_path: $dir/localhost.signing.key
trusted_key_servers: []
suppress_key_server_warning: true
federation_domain_whitelist: []
report_stats: false
enable_registration: false
registration_shared_secret: "$SECRET"
macaroon_secret_key: "opsbot-synapse-test-macaroons"
form_secret: "opsbot-synapse-test-forms"
bcrypt_rounds: $ROUNDS
rc_message:
  per_second: $RC_RATE
  burst_count: $RC_BURST
rc_login:
  address: {per_second: 1000, burst_count: 1000}
  account: {per_second: 1000, burst_count: 1000}
  failed_attempts: {per_second: 1000, burst_count: 1000}
rc_registration: {per_second: 1000, burst_count: 1000}
rc_joins:
  local: {per_second: 1000, burst_count: 1000}
  remote: {per_second: 1000, burst_count: 1000}
rc_joins_per_room: {per_second: 1000, burst_count: 1000}
rc_invites:
  per_room: {per_second: 1000, burst_count: 1000}
  per_user: {per_second: 1000, burst_count: 1000}
  per_issuer: {per_second: 1000, burst_count: 1000}
rc_room_creation: {per_second: 1000, burst_count: 1000}
CONF
  cat > "$dir/log.config" <<LOGCONF
version: 1
formatters:
  precise:
    format: '%(asctime)s - %(name)s - %(lineno)d - %(levelname)s - %(request)s - %(message)s'
filters:
  context:
    (): synapse.logging.context.LoggingContextFilter
    request: ""
handlers:
  file:
    class: logging.FileHandler
    formatter: precise
    filters: [context]
    filename: $dir/homeserver.log
loggers:
  synapse.storage.SQL: {level: WARNING}
  twisted: {level: WARNING}
root:
  level: INFO
  handlers: [file]
disable_existing_loggers: false
LOGCONF
}

if [[ ! -s $TEMPLATE/homeserver.db ]]; then
  NEW=$(mktemp -d "$TEMPLATE.new.XXXXXX")
  write_conf "$NEW" 1
  {
    "$VENV/bin/python" -m synapse.app.homeserver --config-path "$NEW/homeserver.yaml" --generate-keys
    "$VENV/bin/update_synapse_database" --database-config "$NEW/homeserver.yaml" --run-background-updates
  } > "$NEW/prepare.log" 2>&1 \
    || { tail -n 30 "$NEW/prepare.log" >&2; rm -rf "$NEW"; die "preparing the template failed"; }
  # another start may have made it meanwhile: theirs is as good, and `mv -T` never nests
  mv -T "$NEW" "$TEMPLATE" 2>/dev/null || rm -rf "$NEW"
fi
[[ -z $INSTALL_ONLY ]] || exit 0

# ---- already running? -------------------------------------------------------
RUNNING=
if [[ -s $PIDFILE ]]; then
  OLD=$(cat "$PIDFILE")
  if ours "$OLD" && [[ $(cat "$MODEFILE" 2>/dev/null) == "$MODE $PORT" ]] && answers; then
    log "already running (pid $OLD) on $URL"
    RUNNING=$OLD
  else
    stop_group "$OLD"
    rm -f "$PIDFILE" "$MODEFILE"
  fi
fi

if [[ -z $RUNNING ]]; then
  if curl -sS --max-time 2 -o /dev/null "$URL/" 2>/dev/null; then
    die "port $PORT is already in use by another process"
  fi
  # ---- config; key and schema from the template -----------------------------
  write_conf "$DATA_DIR" "$PORT"
  # a data dir of an earlier start keeps its database (its users and rooms) and key
  for f in homeserver.db localhost.signing.key; do
    [[ -s $DATA_DIR/$f ]] || cp -a "$TEMPLATE/$f" "$DATA_DIR/"
  done
  mkdir -p "$DATA_DIR/media_store"

  # ---- start ----------------------------------------------------------------
  # In the foreground of a session of its own (Synapse's --daemonize would fork away from
  # the pid we get), so its pid is its process group, as for gunicorn in start-keystone.sh.
  : > "$LOGFILE"
  setsid nohup "$VENV/bin/python" -X "opsbot-pidfile=$PIDFILE" -m synapse.app.homeserver \
    --config-path "$CONF" >>"$LOGFILE" 2>&1 < /dev/null &
  PID=$!
  echo "$PID" > "$PIDFILE"
  deadline=$(( SECONDS + WAIT ))
  until answers; do
    if ! alive "$PID"; then
      tail -n 40 "$LOGFILE" >&2; rm -f "$PIDFILE"
      # Twisted's words for a taken port
      grep -q "Address already in use" "$LOGFILE" && die "port $PORT is already in use (log: $LOGFILE)"
      die "synapse exited during start-up (log: $LOGFILE)"
    fi
    if (( SECONDS >= deadline )); then
      tail -n 40 "$LOGFILE" >&2; stop_group "$PID"; rm -f "$PIDFILE"
      die "no answer on $URL within ${WAIT}s"
    fi
    sleep 0.1
  done
  echo "$MODE $PORT" > "$MODEFILE"
  RUNNING=$PID
  log "synapse $VERSION up on $URL pid $PID, log $LOGFILE"
fi
echo "$RUNNING"
