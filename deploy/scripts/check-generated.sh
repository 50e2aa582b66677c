#!/usr/bin/env bash
# Fails when proto/gen is not what the .proto files generate (run `npm run gen` and commit).
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s#out: proto/gen#out: $tmp/gen#" proto/buf.gen.yaml > "$tmp/buf.gen.yaml"
node_modules/.bin/buf generate proto --template "$tmp/buf.gen.yaml"
if ! diff -r "$tmp/gen" proto/gen >/dev/null; then
  echo "proto/gen is stale: run 'npm run gen' and commit the result" >&2
  diff -r "$tmp/gen" proto/gen | head -20 >&2
  exit 1
fi
echo "proto/gen is fresh"
