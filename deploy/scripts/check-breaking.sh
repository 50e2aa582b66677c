#!/usr/bin/env bash
# Fails when proto/ breaks a contract that main already has (buf's FILE rules: removed or renumbered
# fields, changed types, renamed services and methods...). Additions never fail.
# Compared against: the merge-base with main (origin/main, else main) on any other branch; on main
# itself, the commit before HEAD, so CI checks what the newest commit changed. The working tree is
# what is checked, so uncommitted edits count. A clone with no earlier commit has nothing to break.
set -euo pipefail
cd "$(dirname "$0")/../.."

base=""
main_ref=""
for ref in origin/main main; do
  if git rev-parse --verify --quiet "$ref^{commit}" >/dev/null; then main_ref=$ref; break; fi
done
if [[ -n "$main_ref" && "$(git rev-parse HEAD)" != "$(git rev-parse "$main_ref")" ]]; then
  base=$(git merge-base HEAD "$main_ref" || true)
fi
# On main (or with main unknown), the previous commit: main as it was before the newest change.
if [[ -z "$base" || "$base" == "$(git rev-parse HEAD)" ]]; then
  base=$(git rev-parse --verify --quiet "HEAD~1^{commit}" || true)
fi
if [[ -z "$base" ]]; then
  echo "buf breaking: no earlier commit to compare against (single-commit or shallow clone); nothing to break"
  exit 0
fi
if ! git cat-file -e "$base:proto/buf.yaml" 2>/dev/null; then
  echo "buf breaking: proto/ did not exist at $(git rev-parse --short "$base"); nothing to break"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The base's proto/ as plain files (no buf git fetch, so shallow and detached clones work alike).
git archive "$base" proto | tar -x -C "$tmp"
node_modules/.bin/buf breaking proto --against "$tmp/proto"
echo "buf breaking: proto/ keeps every contract of $(git rev-parse --short "$base")"
