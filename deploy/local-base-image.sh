#!/usr/bin/env bash
# A base image for the Dockerfile made from Debian's archive alone, for machines that can reach
# Debian's and PyPI's mirrors but no image registry: Debian bookworm (its Python is 3.11) with
# python3-venv, imported into podman as localhost/citebot-base:bookworm. The host's CA bundle
# goes in too, with PIP_CERT pointing at it, for networks whose HTTPS proxy has its own CA.
# Needs root, debootstrap and podman (apt-get install debootstrap podman).
set -euo pipefail
IMAGE=${1:-localhost/citebot-base:bookworm}
ROOTFS=$(mktemp -d /tmp/citebot-rootfs.XXXXXX)
trap 'rm -rf "$ROOTFS"' EXIT
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$ROOTFS" \
  http://deb.debian.org/debian
cp /etc/ssl/certs/ca-certificates.crt "$ROOTFS/etc/ssl/certs/ca-certificates.crt"
tar -C "$ROOTFS" -c . | podman import --change "ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt" \
  --change 'CMD ["python3"]' - "$IMAGE"
echo "built $IMAGE"
