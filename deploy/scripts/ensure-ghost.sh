#!/usr/bin/env bash
# The Ghost publishing tests run a real Ghost 5 (npm's `ghost`, the package Ghost-CLI installs) on
# this machine's Node and MariaDB. It is installed once, outside the checkout, into
# GHOST_CACHE_DIR (default ~/.cache/article-service/ghost), as <version>/ beside the others; an
# installed version is found at once. Ghost 6 wants a newer Node than the machine's 20.
set -euo pipefail
GHOST_VERSION=5.130.6
cache=${GHOST_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/article-service/ghost}
target="$cache/$GHOST_VERSION"
[ -f "$target/.installed" ] && exit 0

node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo none)
case "$node_major" in
  18 | 20 | 22) ;;
  *) echo "Ghost $GHOST_VERSION runs on Node 18, 20 or 22 (found: $node_major); the Ghost publishing tests start it with \`node\` from PATH" >&2; exit 1 ;;
esac

mkdir -p "$cache"
# One install at a time; a second run waits for it and then finds it done.
exec 9>"$cache/.install.lock"
flock 9
[ -f "$target/.installed" ] && exit 0

echo "installing Ghost $GHOST_VERSION into $target for the Ghost publishing tests (a few minutes, once)"
staging=$(mktemp -d "$cache/.staging-XXXXXX")
trap 'rm -rf "${staging:?}"' EXIT
(cd "$staging" && npm pack --silent "ghost@$GHOST_VERSION" >/dev/null && tar xzf "ghost-$GHOST_VERSION.tgz")
# The published package.json still names Ghost's development tools (some only on GitHub, which is
# out of reach here) and sqlite3, whose build fetches from GitHub too; the tests use MariaDB.
# npm resolves even omitted dev dependencies, so they go from the manifest itself.
node -e '
  const fs = require("fs");
  const file = process.argv[1];
  const manifest = JSON.parse(fs.readFileSync(file, "utf8"));
  delete manifest.devDependencies;
  if (manifest.optionalDependencies) delete manifest.optionalDependencies.sqlite3;
  fs.writeFileSync(file, JSON.stringify(manifest, null, 2));
' "$staging/package/package.json"
(cd "$staging/package" && npm install --omit=dev --legacy-peer-deps --no-audit --no-fund --loglevel=error >/dev/null)
rm -rf "$target"
mv "$staging/package" "$target"
touch "$target/.installed"
echo "Ghost $GHOST_VERSION installed in $target"
