#!/usr/bin/env bash
# `npm run pack:client [folder]`: builds the typed client package (clients/typescript, compiled by
# tsc on `npm pack`'s prepack) and packs it into a tarball in the folder (default: the current
# one), then prints the tarball's path: what `npm install <tarball>` or `npm publish <tarball>` takes.
set -euo pipefail
dest=$(realpath -m "${1:-.}")
mkdir -p "$dest"
cd "$(dirname "$0")/../../clients/typescript"
rm -rf dist
name=$(npm pack --silent --pack-destination "$dest" | tail -1)
echo "$dest/$name"
