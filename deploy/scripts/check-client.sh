#!/usr/bin/env bash
# Fails when clients/typescript is not what the gateway's OpenAPI document generates (the document,
# the generated code in src/generated, and the package's version, which is the document's
# info.version; run `npm run gen:client` and commit), then lints that document with Redocly's
# recommended rules.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
node_modules/.bin/bun deploy/scripts/gen-client.ts "$tmp/typescript" >/dev/null
stale=0
for generated in openapi.json src/generated package.json; do
  if ! diff -r "$tmp/typescript/$generated" "clients/typescript/$generated" >/dev/null; then
    [ "$stale" = 1 ] || echo "clients/typescript is stale: run 'npm run gen:client' and commit the result" >&2
    stale=1
    diff -r "$tmp/typescript/$generated" "clients/typescript/$generated" | head -20 >&2
  fi
done
[ "$stale" = 0 ] || exit 1
echo "clients/typescript is fresh"
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true node_modules/.bin/redocly lint --config redocly.yaml clients/typescript/openapi.json
