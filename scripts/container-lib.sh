# shellcheck shell=bash
# Shared by scripts/container-build.sh and scripts/container-test.sh: pick
# the container engine, adapt Podman to the project's machines when (and
# only when) its defaults cannot start a container here, and build the
# images. Source it; it defines functions and CTR_* variables.

# ctr_pick_engine sets CTR to podman, or docker when podman is missing
# (CONTAINER_ENGINE=docker or podman chooses); for Docker it makes sure an
# engine answers (ctr_docker_ready).
ctr_pick_engine() {
	CTR_BUILD_NET=()
	CTR_RUN_NET=
	CTR=${CONTAINER_ENGINE:-}
	if [ -z "$CTR" ]; then
		if command -v podman >/dev/null 2>&1; then CTR=podman
		elif command -v docker >/dev/null 2>&1; then CTR=docker
		else echo "container: neither podman nor docker is installed (Debian: apt-get install podman)" >&2; return 1
		fi
	fi
	case "$CTR" in
	podman) ;;
	docker) ctr_docker_ready ;;
	*) echo "container: CONTAINER_ENGINE=$CTR: use podman or docker" >&2; return 1 ;;
	esac
}

# ctr_docker_ready makes sure `docker` reaches an engine that can build
# with BuildKit (the Containerfile's cache mounts need it). DOCKER picks the
# client. A client without the buildx component falls back to Debian's
# docker.io client (/usr/bin/docker, BuildKit built in). When no engine
# answers and this is root with Debian's dockerd installed, it starts a
# private one for this script and ctr_docker_stop ends it; a machine whose
# Docker runs keeps it. The private engine changes nothing of the machine's
# own: its socket and state are its own (/run/acu-dockerd,
# /var/lib/acu-dockerd, which keeps the layer cache between runs), cgroupfs,
# and it leaves the host's firewall, IP forwarding and bridges alone
# (--iptables=false --ip-masq=false --ip-forward=false --bridge=none). So
# it has no default bridge network (ctr_docker_nets): builds use the host's
# network, and containers a network of their own (compose makes its
# project's network itself), whose published ports Docker's userland proxy
# serves.
ctr_docker_ready() {
	CTR=${DOCKER:-docker}
	if ! "$CTR" buildx version >/dev/null 2>&1; then
		if [ -x /usr/bin/docker ] && [ "$(command -v "$CTR")" != /usr/bin/docker ]; then
			echo "container: $CTR has no buildx; using Debian's client /usr/bin/docker (BuildKit built in)" >&2
			CTR=/usr/bin/docker
		fi
		export DOCKER_BUILDKIT=1
	fi
	# Runs of these scripts take turns on a machine (the private engine
	# below is one per machine, and they share the images' tags): the
	# lock is held until the script exits. A child script finds DOCKER_HOST
	# set by its parent and does not wait for its parent's lock.
	if [ -z "${DOCKER_HOST:-}" ] && [ "$(id -u)" = 0 ] && command -v flock >/dev/null 2>&1; then
		exec 9>/run/acu-docker.lock
		if ! flock -n 9; then
			echo "container: another run of acu's container scripts holds /run/acu-docker.lock; waiting (15 min at most)" >&2
			flock -w 900 9 || { echo "container: /run/acu-docker.lock still held after 15 min" >&2; return 1; }
		fi
	fi
	if "$CTR" info >/dev/null 2>&1; then ctr_docker_nets; return 0; fi
	if [ "$(id -u)" != 0 ] || ! command -v dockerd >/dev/null 2>&1; then
		echo "container: no Docker engine answers (start dockerd, or apt-get install docker.io as root)" >&2
		return 1
	fi
	CTR_DOCKERD_DIR=/run/acu-dockerd
	mkdir -p "$CTR_DOCKERD_DIR" /var/lib/acu-dockerd
	echo "container: no Docker engine answers; starting a private dockerd ($CTR_DOCKERD_DIR/docker.sock)" >&2
	dockerd --data-root /var/lib/acu-dockerd --exec-root "$CTR_DOCKERD_DIR/exec" \
		-H "unix://$CTR_DOCKERD_DIR/docker.sock" --pidfile "$CTR_DOCKERD_DIR/dockerd.pid" \
		--exec-opt native.cgroupdriver=cgroupfs \
		--iptables=false --ip-masq=false --ip-forward=false --bridge=none \
		>"$CTR_DOCKERD_DIR/dockerd.log" 2>&1 9>&- &
	CTR_DOCKERD_PID=$!
	export DOCKER_HOST=unix://$CTR_DOCKERD_DIR/docker.sock
	local i
	for i in $(seq 150); do
		if "$CTR" info >/dev/null 2>&1; then ctr_docker_nets; return 0; fi
		kill -0 "$CTR_DOCKERD_PID" 2>/dev/null || break
		sleep 0.2
	done
	tail -5 "$CTR_DOCKERD_DIR/dockerd.log" >&2
	echo "container: the private dockerd did not start (log: $CTR_DOCKERD_DIR/dockerd.log)" >&2
	return 1
}

# ctr_docker_nets: an engine without a default bridge network (the private
# one above, or any dockerd run with --bridge=none) builds on the host's
# network (CTR_BUILD_NET) and runs containers on a network of their own
# (CTR_RUN_NET says so).
ctr_docker_nets() {
	if "$CTR" network inspect bridge >/dev/null 2>&1; then return 0; fi
	CTR_BUILD_NET=(--network host)
	# shellcheck disable=SC2034 # read by container-test.sh
	CTR_RUN_NET=private
}

# ctr_docker_stop ends the dockerd ctr_docker_ready started, if any, and
# the containerd it started (by the pid it recorded), and unmounts the
# network namespace it leaves mounted under its exec root.
ctr_docker_stop() {
	[ -n "${CTR_DOCKERD_PID:-}" ] || return 0
	local i cpid=""
	[ -f "$CTR_DOCKERD_DIR/exec/containerd/containerd.pid" ] && cpid=$(cat "$CTR_DOCKERD_DIR/exec/containerd/containerd.pid")
	kill "$CTR_DOCKERD_PID" 2>/dev/null || true
	for i in $(seq 100); do kill -0 "$CTR_DOCKERD_PID" 2>/dev/null || break; sleep 0.1; done
	if [ -n "$cpid" ] && kill -0 "$cpid" 2>/dev/null; then
		kill "$cpid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$cpid" 2>/dev/null || break; sleep 0.1; done
	fi
	umount "$CTR_DOCKERD_DIR/exec/netns/default" 2>/dev/null || true
	CTR_DOCKERD_PID=
}

# ctr_image_exists IMAGE: whether the engine holds IMAGE.
ctr_image_exists() {
	if [ "$CTR" = podman ]; then podman image exists "$1"; else "$CTR" image inspect "$1" >/dev/null 2>&1; fi
}

# ctr_compat IMAGE starts `true` in IMAGE. When that fails under Podman and
# Debian's runc is installed, it writes a containers.conf that uses runc
# with cgroupfs, no default ulimits and no pids limit (what Podman needs on
# Debian 12 hosts with hybrid cgroups as root, where crun's setrlimit is
# refused), exports CONTAINERS_CONF for this script and its children, and
# tries again.
ctr_compat() {
	local img="$1" err
	if err=$("$CTR" run --rm "$img" true 2>&1); then return 0; fi
	if [ "$CTR" != podman ] || [ -n "${CONTAINERS_CONF:-}" ] || [ ! -x /usr/sbin/runc ]; then
		echo "container: $CTR cannot start a container of $img: $err" >&2
		return 1
	fi
	local conf
	conf="${TMPDIR:-/tmp}/acu-containers-$(id -u).conf"
	cat > "$conf" <<'CONF'
# Written by acu's scripts/container-lib.sh: Podman's defaults could not
# start a container on this machine (setrlimit refused, hybrid cgroups).
[containers]
default_ulimits = []
pids_limit = 0
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
[engine.runtimes]
runc = ["/usr/sbin/runc"]
CONF
	export CONTAINERS_CONF="$conf"
	echo "container: podman's defaults failed here ($(printf '%s' "$err" | tail -n1)); using runc with cgroupfs, no default ulimits ($conf)" >&2
	if ! err=$("$CTR" run --rm "$img" true 2>&1); then
		echo "container: podman cannot start a container of $img even with $conf: $err" >&2
		return 1
	fi
}

# ctr_local_bases makes the two images the Containerfile starts from out
# of Debian's packages, without an image registry: CTR_BASE, an mmdebstrap
# root of bookworm (minbase, with ca-certificates), and CTR_GO_IMAGE, that
# root with gcc, libc6-dev, pkg-config and this machine's Go toolchain.
# Each is made once and kept; REBUILD_BASE=1 makes them anew.
ctr_local_bases() {
	CTR_BASE=localhost/acu-debian:bookworm
	CTR_GO_IMAGE=localhost/acu-go:bookworm
	if [ "${REBUILD_BASE:-0}" = 1 ] || ! ctr_image_exists "$CTR_BASE"; then
		command -v mmdebstrap >/dev/null 2>&1 || { echo "container: --local-base needs mmdebstrap (apt-get install mmdebstrap)" >&2; return 1; }
		local tmp mirror=()
		tmp=$(mktemp -d)
		# The host's own Debian sources, so the root comes from the mirror
		# this machine already uses.
		[ -f /etc/apt/sources.list.d/debian.sources ] && mirror=(/etc/apt/sources.list.d/debian.sources)
		echo "container: making $CTR_BASE with mmdebstrap" >&2
		mmdebstrap --quiet --variant=minbase --include=ca-certificates \
			--aptopt='Acquire::Languages "none"' \
			--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
			--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
			--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/log/apt "$1"/var/log/dpkg.log' \
			bookworm "$tmp/root.tar" "${mirror[@]}"
		"$CTR" import --change 'CMD ["/bin/bash"]' "$tmp/root.tar" "$CTR_BASE" >/dev/null
		rm -rf "$tmp"
		"$CTR" image rm -f "$CTR_GO_IMAGE" >/dev/null 2>&1 || true
	fi
	[ "$CTR" = podman ] && ctr_compat "$CTR_BASE"
	if ! ctr_image_exists "$CTR_GO_IMAGE"; then
		local goroot
		goroot=$(go env GOROOT 2>/dev/null || /usr/local/go/bin/go env GOROOT 2>/dev/null) || { echo "container: --local-base needs Go on this machine (its toolchain goes into $CTR_GO_IMAGE)" >&2; return 1; }
		echo "container: making $CTR_GO_IMAGE (Go from $goroot)" >&2
		local ctx
		ctx=$(mktemp -d)
		# The host's own extra certificate authorities go in too (a machine
		# whose outbound TLS passes an inspecting proxy needs them to reach
		# the Go module proxy); only this build image has them, never the
		# desktop image.
		mkdir -p "$ctx/ca"
		cp /usr/local/share/ca-certificates/*.crt "$ctx/ca/" 2>/dev/null || true
		local get_go="cp -a /opt/hostgo /usr/local/go" vol=(-v "$goroot:/opt/hostgo:ro")
		if [ "$CTR" != podman ]; then
			# docker build mounts no host directory: the toolchain goes in
			# the build context.
			cp -a "$goroot" "$ctx/go"
			get_go=":"
			vol=()
		fi
		"$CTR" build --quiet -t "$CTR_GO_IMAGE" "${vol[@]}" "${CTR_BUILD_NET[@]}" -f - "$ctx" >/dev/null <<GOFILE
FROM $CTR_BASE
COPY ca/ /usr/local/share/ca-certificates/
$( [ "$CTR" != podman ] && echo "COPY go/ /usr/local/go/" )
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends gcc libc6-dev pkg-config \
 && rm -rf /var/lib/apt/lists/* && update-ca-certificates >/dev/null && $get_go
ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin GOTOOLCHAIN=local
GOFILE
		rm -rf "$ctx"
	fi
}

# ctr_build_image TAG [ARGS...] builds the Containerfile at the repository's
# root as TAG, stamped with the last commit's time (reproducible layer
# times) and version.
ctr_build_image() {
	local tag="$1"; shift
	local version epoch
	version=$(git describe --always --dirty 2>/dev/null || echo 0.1.0-dev)
	epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)
	if [ "$CTR" = podman ]; then
		# Docker's format keeps HEALTHCHECK (OCI's has no field for it).
		podman build --format docker --timestamp "$epoch" --build-arg "ACU_VERSION=$version" -t "$tag" "$@" -f Containerfile .
	else
		SOURCE_DATE_EPOCH=$epoch "$CTR" build "${CTR_BUILD_NET[@]}" --build-arg "ACU_VERSION=$version" -t "$tag" "$@" -f Containerfile .
	fi
}
