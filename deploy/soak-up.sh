#!/usr/bin/env bash
# Brings up the reference deployment on loopback ports for a soak: a fresh
# PostgreSQL database, two `bokat serve` instances sharing it and one Redis,
# and nginx in front (a child of this script with its own prefix, configured
# from deploy/nginx). Nothing listens beyond 127.0.0.1.
#
#   deploy/soak-up.sh STATE_DIR
#
# It writes STATE_DIR/soak.json (addresses, database, tokens; mode 0600) and
# STATE_DIR/ready once everything answers, then runs until SIGTERM or SIGINT,
# when it stops nginx and the instances. Each instance runs under a loop
# that restarts it when it exits, as systemd's Restart=always does; its
# current process id is in STATE_DIR/serve-a.pid (serve-b.pid), so a soak
# can kill one and watch it come back.
#
# Environment: BOKAT_BIN (the bokat binary; default: built from this
# repository into STATE_DIR), NGINX (default: nginx on PATH, else
# /usr/sbin/nginx), SOAK_PORT (nginx, 18080), SOAK_PORT_A and SOAK_PORT_B
# (the instances, 18081 and 18082; metrics on the port + 1000),
# SOAK_PG (server URL without a database, postgres://postgres@127.0.0.1:5432),
# SOAK_REDIS (redis://127.0.0.1:6379/0), SOAK_DROP_DB=1 (drop the database
# on exit), SOAK_PPROF (true: each instance serves its runtime profiles
# under /debug/pprof/ on its metrics address; false to leave them off).
#
# Exit status 3: nginx is not installed (nothing was started).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
state=${1:?usage: deploy/soak-up.sh STATE_DIR}
mkdir -p "$state"
state=$(cd "$state" && pwd)

nginx_bin=${NGINX:-$(command -v nginx || true)}
[ -z "$nginx_bin" ] && [ -x /usr/sbin/nginx ] && nginx_bin=/usr/sbin/nginx
if [ -z "$nginx_bin" ] || [ ! -x "$nginx_bin" ]; then
  echo "soak-up: nginx is not installed (apt-get install nginx-light, or set NGINX)" >&2
  exit 3
fi

port=${SOAK_PORT:-18080}
port_a=${SOAK_PORT_A:-18081}
port_b=${SOAK_PORT_B:-18082}
pg=${SOAK_PG:-postgres://postgres@127.0.0.1:5432}
redis_url=${SOAK_REDIS:-redis://127.0.0.1:6379/0}
run_id=$(date +%Y%m%d%H%M%S)_$$
db=bokat_soak_$run_id

bin=${BOKAT_BIN:-}
if [ -z "$bin" ]; then
  mkdir -p "$state/bin"
  (cd "$repo" && go build -o "$state/bin/bokat" ./cmd/bokat)
  bin=$state/bin/bokat
fi

supervisors=()
nginx_pid=
cleanup() {
  trap - EXIT INT TERM
  touch "$state/stop"
  rm -f "$state/ready"
  # The instances drain and stop (each loop passes SIGTERM to its
  # instance and waits for it), then nginx stops.
  for p in "${supervisors[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${supervisors[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -n "$nginx_pid" ] && kill -TERM "$nginx_pid" 2>/dev/null || true
  wait || true
  if [ "${SOAK_DROP_DB:-0}" = 1 ]; then
    psql -q "$pg/postgres?sslmode=disable" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null || true
  fi
  echo "soak-up: stopped"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

# One deployment per state directory.
exec 9>"$state/lock"
if ! flock -n 9; then
  echo "soak-up: another soak-up.sh runs in $state" >&2
  trap - EXIT
  exit 1
fi
rm -f "$state/stop" "$state/ready"
psql -q "$pg/postgres?sslmode=disable" -c "CREATE DATABASE $db" >/dev/null
db_url="$pg/$db?sslmode=disable"
echo "soak-up: database $db"

key() { head -c 32 /dev/urandom | base64 -w0; }
# The operator's environment file from the repository, then what differs
# for the soak: development, because the soak's webhook receiver and
# calendar feeds are on loopback (BOKAT_WEBHOOK_ALLOW_PRIVATE), and mail
# goes to files; every other setting is production's, keys included.
umask 077
cat >"$state/soak.env" <<EOF
BOKAT_ENV=development
BOKAT_WEBHOOK_ALLOW_PRIVATE=true
BOKAT_SMTP_URL=
BOKAT_DATABASE_URL=$db_url
BOKAT_BASE_URL=http://127.0.0.1:$port
BOKAT_TOKEN_PEPPER=$(key)
BOKAT_SECRET_KEY=$(key)
BOKAT_OPTION_SIGNING_KEYS=soak1:$(key)
BOKAT_REDIS_URL=$redis_url
BOKAT_REDIS_PREFIX=bokat:soak:$run_id:
BOKAT_TRUSTED_PROXIES=127.0.0.1/32
BOKAT_RATE_SEARCH=${SOAK_RATE_SEARCH:-100000/min}
BOKAT_RATE_WRITES=${SOAK_RATE_WRITES:-100000/min}
BOKAT_RATE_READS=${SOAK_RATE_READS:-100000/min}
BOKAT_RATE_CONTROL=${SOAK_RATE_CONTROL:-100000/min}
BOKAT_CALENDAR_SYNC_INTERVAL=${SOAK_CALENDAR_SYNC_INTERVAL:-10s}
BOKAT_PPROF=${SOAK_PPROF:-true}
EOF
set -a
# shellcheck disable=SC1091
. "$repo/deploy/bokat.env"
# shellcheck disable=SC1091
. "$state/soak.env"
set +a

"$bin" migrate >/dev/null
"$bin" supply import "$repo/internal/supply/demo.yaml" >/dev/null
partner=$("$bin" partner create --name soak --scopes all)
provider=$("$bin" provider token create prv_sthlm_vvs_1 --scopes all --name soak)
# The provider's own Bokat calendar feed (the address a provider subscribes to).
feed=$("$bin" provider feed-url prv_sthlm_vvs_1 | awk '{print $2}')

cat >"$state/soak.json" <<EOF
{"base_url":"http://127.0.0.1:$port","database":"$db_url",
 "partner":$partner,
 "provider":$provider,
 "provider_feed":"$feed",
 "instances":[
  {"name":"a","addr":"127.0.0.1:$port_a","metrics":"127.0.0.1:$((port_a + 1000))","pid_file":"$state/serve-a.pid","log":"$state/serve-a.log"},
  {"name":"b","addr":"127.0.0.1:$port_b","metrics":"127.0.0.1:$((port_b + 1000))","pid_file":"$state/serve-b.pid","log":"$state/serve-b.log"}]}
EOF

# supervise NAME PORT runs one instance and starts it again whenever it
# exits, until the script stops.
supervise() {
  local name=$1 p=$2 pid= status
  trap 'touch "$state/stop"; [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null' TERM
  mkdir -p "$state/$name"
  while [ ! -e "$state/stop" ]; do
    (cd "$state/$name" && BOKAT_ADDR=127.0.0.1:$p BOKAT_METRICS_ADDR=127.0.0.1:$((p + 1000)) \
      BOKAT_MAIL_DIR="$state/$name/mail" exec "$bin" serve) >>"$state/serve-$name.out" 2>>"$state/serve-$name.log" &
    pid=$!
    echo "$pid" >"$state/serve-$name.pid"
    # wait returns early when SIGTERM arrives: wait again until it is gone.
    # (An instance's failure must not end the loop under set -e.)
    wait "$pid" && status=0 || status=$?
    while kill -0 "$pid" 2>/dev/null; do
      wait "$pid" && status=0 || status=$?
    done
    [ "$status" = 0 ] || echo "soak-up: instance $name ($pid) exited with status $status" >&2
    [ -e "$state/stop" ] || sleep 0.5
  done
}
supervise a "$port_a" &
supervisors+=($!)
supervise b "$port_b" &
supervisors+=($!)

ready() { curl -fsS -o /dev/null --max-time 5 "$1/readyz" 2>/dev/null; }
for _ in $(seq 1 360); do
  ready "http://127.0.0.1:$port_a" && ready "http://127.0.0.1:$port_b" && break
  sleep 0.5
done
ready "http://127.0.0.1:$port_a" && ready "http://127.0.0.1:$port_b" || {
  echo "soak-up: the instances did not become ready; logs in $state" >&2
  exit 1
}

mkdir -p "$state/nginx/tmp"
sed -e "s|@STATE@|$state|g" -e "s|@REPO@|$repo|g" -e "s|@PORT@|$port|g" \
  -e "s|@PORT_A@|$port_a|g" -e "s|@PORT_B@|$port_b|g" "$repo/deploy/nginx/soak.conf" >"$state/nginx/nginx.conf"
"$nginx_bin" -t -q -p "$state/nginx" -e "$state/nginx/error.log" -c "$state/nginx/nginx.conf"
"$nginx_bin" -p "$state/nginx" -e "$state/nginx/error.log" -c "$state/nginx/nginx.conf" &
nginx_pid=$!
for _ in $(seq 1 40); do
  ready "http://127.0.0.1:$port" && break
  sleep 0.25
done
ready "http://127.0.0.1:$port" || {
  echo "soak-up: nginx does not answer; see $state/nginx/error.log" >&2
  exit 1
}
touch "$state/ready"
echo "soak-up: ready on http://127.0.0.1:$port (instances on $port_a and $port_b)"
wait
