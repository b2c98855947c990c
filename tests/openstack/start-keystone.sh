#!/usr/bin/env bash
# Part of opsbot's test suite: tests/src/openstack.rs runs it (once per test
# binary) to give the tests a real Keystone; it also works by hand.
# Start a real OpenStack Keystone (PyPI keystone) on loopback, SQLite + fernet,
# under gunicorn; bootstrap admin/RegionOne (once, into a template that each start
# copies) and (optionally) register Placement.
# Idempotent: a running instance from the same DATA_DIR on PORT is reused.
#
# Usage: start-keystone.sh PORT DATA_DIR   (or --install-only: the venv and the template)
#   stdout: the PID of the gunicorn master (only that; logs go to stderr)
#   stop:   kill -TERM "$(cat DATA_DIR/keystone.pid)"
#
# Environment (all optional):
#   KEYSTONE_VENV        venv to use/create (default target/openstack/venv-keystone of this checkout,
#                        where the Rust tests keep it too)
#   KEYSTONE_VERSION     keystone version   (default 30.0.0)
#   KEYSTONE_ADMIN_PASSWORD  admin password (default adminpass); user admin, project admin, domain Default
#   KEYSTONE_REGION      region id          (default RegionOne)
#   PLACEMENT_URL        if set, register service type 'placement' with public/internal/admin
#                        endpoints = this URL, a project 'service' and a user 'placement'
#                        (roles admin+service on 'service') for keystonemiddleware
#   PLACEMENT_SERVICE_PASSWORD  password of that user (default placement-secret)
#   KEYSTONE_TOKEN_EXPIRATION   seconds (default 3600)
#   KEYSTONE_PASSWORD_HASH_ROUNDS  bcrypt rounds for stored passwords (default 4, the
#                        minimum: every password token and user update hashes; fine for tests)
#   KEYSTONE_WAIT        seconds to wait for the API (default 90)
#   PYTHON               interpreter used to create the venv (default python3)
#   PIP_CONSTRAINTS      constraints file (default keystone-constraints.txt next to this script, if present)
set -euo pipefail

die() { echo "start-keystone: $*" >&2; exit 1; }
log() { echo "start-keystone: $*" >&2; }

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=processes.sh
source "$HERE/processes.sh"
start_args "$@"
VERSION=${KEYSTONE_VERSION:-30.0.0}
VENV=${KEYSTONE_VENV:-$HERE/../../target/openstack/venv-keystone}
ADMIN_PW=${KEYSTONE_ADMIN_PASSWORD:-adminpass}
REGION=${KEYSTONE_REGION:-RegionOne}
WAIT=${KEYSTONE_WAIT:-90}
PY=${PYTHON:-python3}
CONSTRAINTS=${PIP_CONSTRAINTS:-$HERE/keystone-constraints.txt}
PIDFILE=$DATA_DIR/keystone.pid
LOGFILE=$DATA_DIR/keystone.log
BASE=http://127.0.0.1:$PORT
URL=$BASE/v3

for t in curl setsid ps awk; do command -v $t >/dev/null || die "$t is required"; done
# shellcheck source=venv.sh
source "$HERE/venv.sh"

answers() { curl -fsS --max-time 2 "$URL" 2>/dev/null | grep -q '"v3'; }
ours() { alive "$1" && tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null | grep -q 'gunicorn.*keystone_wsgi'; }


# ---- venv -------------------------------------------------------------------
install_once keystone "$VERSION"

# ---- the template: schema, keys and bootstrap, once per venv and settings ----
# Each keystone-manage run imports all of Keystone, 3-4 s of CPU (far more on a machine busy
# compiling or running tests): the four it takes are run once, into a template every start
# copies. Only the port differs between starts: the identity endpoints are then pointed at it.
ROUNDS=${KEYSTONE_PASSWORD_HASH_ROUNDS:-4}
TEMPLATE=$VENV/template-$(printf '%s\n' "$VERSION" "$ADMIN_PW" "$REGION" "$ROUNDS" | sha256sum | cut -c1-16)
PLACEHOLDER=http://127.0.0.1:1/v3/

write_conf() { # DIR: keystone.conf for a data dir (or the template being made)
  cat > "$1/keystone.conf" <<CONF
[DEFAULT]
debug = false
[database]
connection = sqlite:///$1/keystone.db
[identity]
password_hash_rounds = $ROUNDS
[token]
provider = fernet
expiration = ${KEYSTONE_TOKEN_EXPIRATION:-3600}
[fernet_tokens]
key_repository = $1/fernet-keys
[fernet_receipts]
key_repository = $1/fernet-keys
[credential]
key_repository = $1/credential-keys
[cache]
# Keystone's cache in its one worker's memory, as memcached is for a production Keystone (its
# install guide sets one up): a token request then costs 30-60 ms instead of 250-300 (the
# role assignments and the catalog are read from SQLite otherwise, at every request). Keystone
# invalidates what it changes itself, and it is the only writer.
enabled = true
backend = dogpile.cache.memory
CONF
}

# The identity service's endpoints at URL, in the database DB: plain SQLite, no Keystone import.
point_identity_at() { # DB URL
  "$VENV/bin/python" - "$1" "$2" <<'PYURL' || die "cannot set the identity endpoints in $1"
import sqlite3, sys
with sqlite3.connect(sys.argv[1]) as db:
    db.execute("UPDATE endpoint SET url = ? WHERE service_id IN"
               " (SELECT id FROM service WHERE type = 'identity')", (sys.argv[2],))
PYURL
}

if [[ ! -s $TEMPLATE/keystone.db ]]; then
  NEW=$(mktemp -d "$TEMPLATE.new.XXXXXX")
  write_conf "$NEW"
  KM=("$VENV/bin/keystone-manage" --config-file "$NEW/keystone.conf")
  U=$(id -un); G=$(id -gn)
  {
    "${KM[@]}" db_sync
    "${KM[@]}" fernet_setup --keystone-user "$U" --keystone-group "$G"
    "${KM[@]}" credential_setup --keystone-user "$U" --keystone-group "$G"
    "${KM[@]}" bootstrap --bootstrap-password "$ADMIN_PW" --bootstrap-region-id "$REGION" \
      --bootstrap-admin-url "$PLACEHOLDER" --bootstrap-internal-url "$PLACEHOLDER" \
      --bootstrap-public-url "$PLACEHOLDER"
  } > "$NEW/keystone-manage.log" 2>&1 \
    || { tail -n 30 "$NEW/keystone-manage.log" >&2; rm -rf "$NEW"; die "keystone-manage failed"; }
  # another start may have made it meanwhile: theirs is as good, and `mv -T` never nests
  mv -T "$NEW" "$TEMPLATE" 2>/dev/null || rm -rf "$NEW"
fi
[[ -z $INSTALL_ONLY ]] || exit 0

# ---- already running? -------------------------------------------------------
RUNNING=
if [[ -s $PIDFILE ]]; then
  OLD=$(cat "$PIDFILE")
  if ours "$OLD" && answers; then
    log "already running (pid $OLD) on $URL"
    RUNNING=$OLD
  else
    stop_group "$OLD"
    rm -f "$PIDFILE"
  fi
fi

if [[ -z $RUNNING ]]; then
  if curl -sS --max-time 2 -o /dev/null "$BASE/" 2>/dev/null; then
    die "port $PORT is already in use by another process"
  fi
  # ---- config; schema, keys and bootstrap from the template -----------------
  write_conf "$DATA_DIR"
  # keystone parses sys.argv with oslo.config at import time and would choke on
  # gunicorn's own arguments ("unrecognized arguments"); hide them.
  cat > "$DATA_DIR/keystone_wsgi.py" <<'PYW'
import sys
sys.argv = sys.argv[:1]
from keystone.wsgi.api import application  # noqa: E402,F401
PYW
  # a data dir of an earlier start keeps its database and keys
  [[ -s $DATA_DIR/keystone.db ]] || cp -a "$TEMPLATE/keystone.db" "$DATA_DIR/"
  for keys in fernet-keys credential-keys; do
    [[ -s $DATA_DIR/$keys/0 ]] || cp -a "$TEMPLATE/$keys" "$DATA_DIR/"
  done
  point_identity_at "$DATA_DIR/keystone.db" "$URL/"

  # ---- start ----------------------------------------------------------------
  # One worker: SQLite refuses a second writer at once ("database is locked"), where a
  # transaction turns from reading to writing.
  GARGS=(--workers 1 --bind "127.0.0.1:$PORT" --pid "$PIDFILE" --access-logfile - --timeout 60
         --pythonpath "$DATA_DIR")
  "$VENV/bin/gunicorn" --help 2>/dev/null | grep -q -- --no-control-socket && GARGS+=(--no-control-socket)
  : > "$LOGFILE"
  OS_KEYSTONE_CONFIG_FILES=$DATA_DIR/keystone.conf setsid nohup "$VENV/bin/gunicorn" "${GARGS[@]}" \
    keystone_wsgi:application >>"$LOGFILE" 2>&1 < /dev/null &
  PID=$!
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
  [[ -s $PIDFILE ]] && PID=$(cat "$PIDFILE")
  echo "$PID" > "$PIDFILE"
  RUNNING=$PID
  log "keystone $VERSION up on $URL pid $PID, log $LOGFILE"
fi

# ---- register placement (idempotent, REST with an admin token) -------------
if [[ -n ${PLACEMENT_URL:-} ]]; then
  KS_URL=$URL ADMIN_PW=$ADMIN_PW REGION=$REGION PLACEMENT_URL=$PLACEMENT_URL \
  SVC_PW=${PLACEMENT_SERVICE_PASSWORD:-placement-secret} "$VENV/bin/python" - <<'PYREG' >&2 || die "placement registration failed"
import json, os, urllib.request, urllib.error
ks, region, purl = os.environ['KS_URL'], os.environ['REGION'], os.environ['PLACEMENT_URL'].rstrip('/')

def call(method, path, body=None, token=None):
    req = urllib.request.Request(ks + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None)
    req.add_header('content-type', 'application/json'); req.add_header('accept', 'application/json')
    if token: req.add_header('X-Auth-Token', token)
    with urllib.request.urlopen(req, timeout=30) as r:
        data = r.read()
        return r.headers, (json.loads(data) if data else None)

h, _ = call('POST', '/auth/tokens', {'auth': {'identity': {'methods': ['password'], 'password': {'user': {
    'name': 'admin', 'domain': {'id': 'default'}, 'password': os.environ['ADMIN_PW']}}},
    'scope': {'project': {'name': 'admin', 'domain': {'id': 'default'}}}}})
tok = h['X-Subject-Token']

def get_or_create(coll, key, query, body):
    _, d = call('GET', f'/{coll}?{query}', token=tok)
    if d[coll]:
        return d[coll][0]
    _, d = call('POST', f'/{coll}', {key: body}, token=tok)
    print(f'created {key} {d[key].get("name", d[key].get("interface"))}')
    return d[key]

svc = get_or_create('services', 'service', 'type=placement', {'type': 'placement', 'name': 'placement',
                    'description': 'Placement API', 'enabled': True})
_, d = call('GET', f'/endpoints?service_id={svc["id"]}', token=tok)
have = {e['interface']: e for e in d['endpoints']}
for iface in ('public', 'internal', 'admin'):
    e = have.get(iface)
    if e and e['url'] == purl and e['region_id'] == region:
        continue
    if e:
        call('DELETE', f'/endpoints/{e["id"]}', token=tok)
    call('POST', '/endpoints', {'endpoint': {'service_id': svc['id'], 'interface': iface,
                                             'url': purl, 'region_id': region, 'enabled': True}}, token=tok)
    print(f'endpoint {iface} -> {purl}')
proj = get_or_create('projects', 'project', 'name=service&domain_id=default',
                     {'name': 'service', 'domain_id': 'default', 'description': 'Service project'})
user = get_or_create('users', 'user', 'name=placement&domain_id=default',
                     {'name': 'placement', 'domain_id': 'default', 'password': os.environ['SVC_PW']})
# keep the password in sync with what placement will use
call('PATCH', f'/users/{user["id"]}', {'user': {'password': os.environ['SVC_PW']}}, token=tok)
for role in ('admin', 'service'):
    _, d = call('GET', f'/roles?name={role}', token=tok)
    call('PUT', f'/projects/{proj["id"]}/users/{user["id"]}/roles/{d["roles"][0]["id"]}', token=tok)
print('placement registered')
PYREG
fi
echo "$RUNNING"
