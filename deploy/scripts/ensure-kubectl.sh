#!/usr/bin/env bash
# test/unit/k8s-render-kustomize.test.ts compares deploy/k8s/render.ts with `kubectl kustomize`
# on the base and both overlays; a fresh machine has no kubectl. Debian's kubernetes-client is
# installed when none is there. The overlays' inline patches need the kustomize of kubectl 1.21
# or later: an older kubectl (bookworm's package is 1.20) is reported here, and the test then
# fails naming it, rather than the whole suite stopping.
set -euo pipefail
cd "$(dirname "$0")/../.."
renders() { kubectl kustomize deploy/k8s/overlays/production >/dev/null 2>&1; }
if command -v kubectl >/dev/null && renders; then
  exit 0
fi
if ! command -v kubectl >/dev/null; then
  if [ "$(id -u)" != 0 ]; then
    echo "the Kubernetes manifests' test needs kubectl (1.21 or later): apt-get install kubernetes-client" >&2
    exit 1
  fi
  echo "installing Debian's kubernetes-client (kubectl) for the Kubernetes manifests' test"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends kubernetes-client >/dev/null
fi
if ! renders; then
  echo "warning: $(kubectl version --client 2>/dev/null | head -1) cannot render deploy/k8s/overlays (its kustomize predates inline patches); test/unit/k8s-render-kustomize.test.ts needs kubectl 1.21 or later" >&2
fi
