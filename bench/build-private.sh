#!/usr/bin/env bash
# Builds the ESM package into a private directory (default /tmp/ndl-bench-build) and prints the
# NDL_BENCH_DIST value to use: a concurrent `npm run build` (rm -rf dist) cannot break the run.
set -euo pipefail
out="${1:-/tmp/ndl-bench-build}"
root="$(cd "$(dirname "$0")/.." && pwd)"
rm -rf "$out" && mkdir -p "$out"
npx --prefix "$root" tsc -p "$root/tsconfig.build.json" --outDir "$out/esm" --declaration false --declarationMap false --sourceMap false
echo '{"type":"module"}' > "$out/package.json"
ln -s "$root/node_modules" "$out/node_modules"
echo "$out/esm/index.js"
