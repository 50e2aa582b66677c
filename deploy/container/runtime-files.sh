#!/usr/bin/env bash
# Gathers what the runtime image holds, from the build stage's /app (installed and bundled), into
# <out> as a root filesystem: <out>/usr/local/bin/bun and <out>/app/… at the paths the processes
# resolve at run time. The Dockerfile's runtime stage copies <out> and nothing else; what is in it
# and why: docs/container-image.md.
#   bash deploy/container/runtime-files.sh <out>   (run from the repository root, after the bundles)
set -euo pipefail

out="${1:?usage: runtime-files.sh <out directory>}"
# A fresh, absolute directory: nothing already there is overwritten or mixed in.
[[ "$out" == /* && ! -e "$out" ]] || { echo "runtime-files.sh: $out must be an absolute path that does not exist yet" >&2; exit 1; }
app="$out$PWD"
mkdir -p "$out/usr/local/bin" "$app"

# Copies repository-relative paths into the image's /app, keeping their folders.
keep() { cp -a --parents "$@" "$app/"; }

# Bun: the platform package's binary, which npm's install of the `bun` package put behind .bin/bun.
bun="$(readlink -f node_modules/.bin/bun)"
cp "$bun" "$out/usr/local/bin/bun"
want="$(node_modules/.bin/bun --print 'require("./node_modules/bun/package.json").version')"
got="$("$out/usr/local/bin/bun" --version)"
[[ "$got" == "$want" ]] || { echo "runtime-files.sh: $bun is Bun $got, the lock pins $want" >&2; exit 1; }
# The production overlay's TLS probes (deploy/k8s/overlays/production/grpc-tls.yaml) run
# /app/node_modules/.bin/bun deploy/k8s/grpc-health-probe.ts.
mkdir -p "$app/node_modules/.bin"
ln -s /usr/local/bin/bun "$app/node_modules/.bin/bun"

# Each process's bundle and its line map (stack traces name the source files and lines).
bundles=(gateway/src/main.bundle.js services/*/src/main.bundle.js)
for bundle in "${bundles[@]}"; do keep "$bundle" "$bundle.map"; done

# Migrations, found beside each service's entry (new URL("./db/migrations", import.meta.url)):
# drizzle's migrator reads meta/_journal.json and the SQL; the snapshots serve drizzle-kit only.
for migrations in services/*/src/db/migrations; do keep "$migrations"/*.sql "$migrations/meta/_journal.json"; done

# The dashboard's page, styles and script sources, which the gateway bundles when first asked
# (gateway/src/dashboard/dashboard-pages.ts; no npm package is imported, so Bun alone builds it).
keep dashboard

# The TLS health probe, bundled like the processes; its source path is what the probes name
# (Bun runs a bundle under either name).
keep deploy/k8s/grpc-health-probe.bundle.js deploy/k8s/grpc-health-probe.bundle.js.map
ln -s grpc-health-probe.bundle.js "$app/deploy/k8s/grpc-health-probe.ts"

# Files that processes read from node_modules at run time, not bundled:
# - the API reference page's script (gateway/src/openapi/docs-routes.ts, Bun.resolveSync from the
#   gateway's folder: the package's package.json and the one bundle it serves);
keep node_modules/redoc/package.json node_modules/redoc/LICENSE node_modules/redoc/bundles/redoc.standalone.js node_modules/redoc/bundles/redoc.standalone.js.LICENSE.txt
# - the queue dashboard's page and scripts (gateway/src/plugins/admin-server.ts, uiBasePath());
keep node_modules/@bull-board/ui/package.json node_modules/@bull-board/ui/dist
# - msgpackr's native decoder for BullMQ's job data (node-gyp-build-optional-packages loads the
#   platform package's .node file next to the package.json it resolves from; pure JS without it);
keep node_modules/msgpackr-extract/package.json node_modules/msgpackr-extract/LICENSE node_modules/@msgpackr-extract
# - ioredis's own version, which it reports to Redis on connect (CLIENT SETINFO lib-ver).
keep node_modules/ioredis/package.json

# Every package folder a bundle names by its absolute path (a __dirname Bun wrote in) is here:
# a dependency that starts reading its own files at run time fails the build, not a pod.
for dir in $(grep -ohE "\"$PWD/node_modules/(@[^/\"]+/)?[^/\"]+" "${bundles[@]}" | tr -d '"' | sort -u); do
  [[ -e "$out$dir/package.json" ]] || { echo "runtime-files.sh: a bundle reads from $dir, which the runtime image lacks" >&2; exit 1; }
done
echo "runtime files in $out: $(du -sh "$out" | cut -f1) (Bun $got, ${#bundles[@]} bundles)"
