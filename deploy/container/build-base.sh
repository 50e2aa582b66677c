#!/usr/bin/env bash
# Builds the Dockerfile's two Debian bookworm bases from Debian's own packages, for machines that
# reach Debian's mirrors but no image registry (docs/container-image.md):
#   build    Node.js and npm: the build stage's BASE_IMAGE, which installs and bundles.
#   runtime  minbase with ca-certificates only: the runtime stage's RUNTIME_IMAGE. Bun needs glibc
#            alone; libstdc++ and libgcc (in minbase already, apt needs them) load msgpackr's native
#            decoder.
#   bash deploy/container/build-base.sh [image]             (build; default localhost/debian-base:bookworm)
#   bash deploy/container/build-base.sh --runtime [image]   (default localhost/debian-runtime:bookworm)
# Kept once built: a second run only says the image is there. Needs root, podman and debootstrap.
set -euo pipefail

flavour=build
if [[ "${1:-}" == --runtime ]]; then
  flavour=runtime
  shift
fi
if [[ "$flavour" == runtime ]]; then
  image="${1:-localhost/debian-runtime:bookworm}"
  # Nothing installs anything on this one: no Node.js, no npm, no compiler.
  packages=(ca-certificates)
else
  image="${1:-localhost/debian-base:bookworm}"
  # nodejs runs npm install and the packages' install scripts; Bun itself comes from npm.
  packages=(nodejs npm ca-certificates)
fi
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
security_mirror="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
podman=(podman --runtime "${PODMAN_RUNTIME:-runc}")

if "${podman[@]}" image exists "$image"; then
  echo "$flavour base image $image exists (podman rmi $image to rebuild it)"
  exit 0
fi
for tool in podman debootstrap; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install -y podman runc debootstrap" >&2; exit 1; }
done

root="$(mktemp -d /var/tmp/debian-base.XXXXXX)"
# Every path below is inside the new root: refuse to go on with an empty one.
[[ "$root" == /var/tmp/debian-base.* && -d "$root" ]] || { echo "cannot create a build directory" >&2; exit 1; }
cleanup() {
  if mountpoint -q "$root/proc"; then umount "$root/proc"; fi
  rm -rf "$root"
}
trap cleanup EXIT

debootstrap --variant=minbase bookworm "$root" "$mirror"
# Security updates too: glibc and Node.js get their fixes there.
printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s bookworm-security main\n' "$mirror" "$mirror" "$security_mirror" >"$root/etc/apt/sources.list"
# Installed by apt inside the root rather than debootstrap --include: npm's hundred-odd
# dependencies need apt's resolver, and configuring them needs /proc.
mount -t proc proc "$root/proc"
chroot "$root" apt-get update -q
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get upgrade -y -q
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${packages[@]}"
chroot "$root" apt-get clean
umount "$root/proc"
# Lists and caches serve no purpose in an image that installs nothing more.
rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/"*.bin "$root/usr/share/doc/"* "$root/usr/share/man/"* "$root/usr/share/info/"*
if [[ "$flavour" == runtime ]]; then
  # Nor do the logs of the build, debconf's backups or translations nobody reads in a container.
  rm -rf "$root/var/log/"*.log "$root/var/log/apt/"* "$root/var/cache/debconf/"*-old "$root/usr/share/locale/"*
  summary="minbase, ca-certificates"
else
  summary="Node.js $(chroot "$root" node --version) and npm from Debian"
fi

tar -C "$root" -c . | "${podman[@]}" import --change 'CMD ["/bin/bash"]' - "$image"
echo "built $flavour base image $image ($summary)"
