#!/usr/bin/env bash
# The tests use the Postgres, Redis and MariaDB of this machine (127.0.0.1, default ports): start
# the installed ones when they are not answering, so a test lane on a fresh machine with nothing
# running needs no step by hand. (`npm start` instead starts private servers under .local/.)
set -euo pipefail

if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  echo "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
  for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 1; done
fi
# The publishing tests run a real WordPress and a real Ghost against this machine's MariaDB.
if [ "${1:-}" = "--with-mariadb" ] && ! mysqladmin -uroot ping >/dev/null 2>&1; then
  echo "starting MariaDB"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
  for _ in $(seq 1 30); do mysqladmin -uroot ping >/dev/null 2>&1 && break; sleep 1; done
fi
