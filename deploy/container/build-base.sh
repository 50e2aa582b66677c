#!/usr/bin/env bash
# Builds a Debian bookworm base image with Node.js and npm from Debian's own packages, for
# machines that reach Debian's mirrors but no image registry. The Dockerfile takes it as
#   podman build --build-arg BASE_IMAGE=localhost/debian-base:bookworm …
# Kept once built: a second run only says the image is there. Needs root, podman and debootstrap.
#   bash deploy/container/build-base.sh [image]   (default localhost/debian-base:bookworm)
set -euo pipefail

image="${1:-localhost/debian-base:bookworm}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
security_mirror="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
podman=(podman --runtime "${PODMAN_RUNTIME:-runc}")

if "${podman[@]}" image exists "$image"; then
  echo "base image $image exists (podman rmi $image to rebuild it)"
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
# Security updates too: Node.js gets its fixes there.
printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s bookworm-security main\n' "$mirror" "$mirror" "$security_mirror" >"$root/etc/apt/sources.list"
# nodejs runs npm install and the packages' install scripts; Bun itself comes from npm.
# Installed by apt inside the root rather than debootstrap --include: npm's hundred-odd
# dependencies need apt's resolver, and configuring them needs /proc.
mount -t proc proc "$root/proc"
chroot "$root" apt-get update -q
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nodejs npm ca-certificates
chroot "$root" apt-get clean
umount "$root/proc"
# Lists and caches serve no purpose in an image that installs nothing more.
rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/"*.bin "$root/usr/share/doc/"* "$root/usr/share/man/"*
node_version="$(chroot "$root" node --version)"

tar -C "$root" -c . | "${podman[@]}" import --change 'CMD ["/bin/bash"]' - "$image"
echo "built base image $image (Node.js $node_version and npm from Debian)"
