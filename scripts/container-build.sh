#!/usr/bin/env bash
# Builds acu's desktop image (Containerfile) with Podman, or Docker when
# Podman is missing or CONTAINER_ENGINE=docker:
#
#   bash scripts/container-build.sh [--local-base] [--tag NAME]
#
# By default the Containerfile's stages start from Debian's and Go's images
# in a registry. --local-base makes both locally from Debian's packages
# instead, for machines that reach Debian's apt repositories but no image
# registry (the project's machines): an mmdebstrap root of bookworm imported
# as localhost/acu-debian:bookworm, and localhost/acu-go:bookworm, that root
# with gcc and this machine's Go toolchain (go env GOROOT). It needs root,
# mmdebstrap and Podman or Docker.
#
# Podman on the project's machines (Debian 12 hosts with hybrid cgroups,
# as root) refuses the default rlimits and pids limit: when a container of
# the base image cannot start with this machine's configuration, the script
# retries with runc, cgroupfs and no default ulimits in a containers.conf of
# its own (CONTAINERS_CONF), and says so. Other machines keep their own.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/container-lib.sh

tag=acu-desktop
local_base=false
while [ $# -gt 0 ]; do
	case "$1" in
	--local-base) local_base=true ;;
	--tag) tag="$2"; shift ;;
	-h|--help) sed -n '2,19p' "$0"; exit 0 ;;
	*) echo "container-build: unknown argument $1 (use --local-base, --tag NAME)" >&2; exit 2 ;;
	esac
	shift
done

ctr_pick_engine
trap ctr_docker_stop EXIT
build_args=()
if $local_base; then
	ctr_local_bases
	build_args+=(--build-arg "BASE=$CTR_BASE" --build-arg "GO_IMAGE=$CTR_GO_IMAGE")
fi
ctr_build_image "$tag" "${build_args[@]}"
