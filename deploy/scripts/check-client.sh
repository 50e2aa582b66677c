#!/usr/bin/env bash
# Fails when clients/typescript is not what the gateway's OpenAPI document generates (run
# `npm run gen:client` and commit), then lints that document with Redocly's recommended rules.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
node_modules/.bin/bun deploy/scripts/gen-client.ts "$tmp/typescript" >/dev/null
if ! diff -r "$tmp/typescript" clients/typescript >/dev/null; then
  echo "clients/typescript is stale: run 'npm run gen:client' and commit the result" >&2
  diff -r "$tmp/typescript" clients/typescript | head -20 >&2
  exit 1
fi
echo "clients/typescript is fresh"
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true node_modules/.bin/redocly lint --config redocly.yaml clients/typescript/openapi.json
