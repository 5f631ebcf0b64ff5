#!/usr/bin/env bash
# Makes sure PostgreSQL and NATS (with JetStream) answer on loopback, starting them with this
# machine's own commands when they do not. Idempotent; used by the tests, the demo and CI.
set -euo pipefail

pg_up() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }
nats_up() { (exec 3<>/dev/tcp/127.0.0.1/4222) 2>/dev/null; }

# On a machine that lacks a server, install it from Debian's packages (the project's machines have both).
need_pkg() { command -v "$1" >/dev/null || [ -x "$2" ] || { echo "capstan: installing $3"; apt-get update -qq && apt-get install -y -qq "$3" >/dev/null; }; }
command -v pg_isready >/dev/null || need_pkg pg_isready /usr/bin/pg_isready postgresql-client
need_pkg pg_ctlcluster /usr/bin/pg_ctlcluster postgresql
need_pkg nats-server /usr/sbin/nats-server nats-server

if ! pg_up; then
  echo "capstan: starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start || true
  for _ in $(seq 1 50); do pg_up && break; sleep 0.2; done
  pg_up || { echo "capstan: PostgreSQL is not answering on 127.0.0.1:5432" >&2; exit 1; }
fi

if ! nats_up; then
  echo "capstan: starting NATS with JetStream"
  mkdir -p /var/lib/nats-server
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
    -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
  for _ in $(seq 1 50); do nats_up && break; sleep 0.2; done
  nats_up || { echo "capstan: NATS is not answering on 127.0.0.1:4222" >&2; exit 1; }
fi
echo "capstan: PostgreSQL and NATS are up"

# The database the services use by default (DATABASE_URL overrides it).
if ! psql -h 127.0.0.1 -U postgres -tAc "select 1 from pg_database where datname = 'capstan'" postgres | grep -q 1; then
  psql -h 127.0.0.1 -U postgres -qc "create database capstan" postgres
  echo "capstan: created database capstan"
fi
