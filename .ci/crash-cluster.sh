#!/usr/bin/env bash
# CI: what test/reliability/server-crash.test.ts needs to create, crash and restart a private
# Postgres cluster of its own (initdb in a temp folder, a free loopback port from 55433, run as
# user `postgres` through runuser). The test creates and removes the cluster itself; this only
# makes sure the server binaries, runuser and the `postgres` user exist. It never touches the
# shared cluster on 5432.
set -euo pipefail

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || ! id postgres >/dev/null 2>&1; then
  echo "ci: Postgres server binaries missing; installing them for the crash cluster"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
if ! command -v runuser >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq util-linux >/dev/null
fi
echo "ci: crash cluster prerequisites: $(ls -d /usr/lib/postgresql/*/bin | tail -n 1), runuser, user postgres"
