#!/usr/bin/env bash
# The release check of acu's desktop image and fleet (docs/containers.md),
# run for real with Podman or Docker:
#
#   bash scripts/container-test.sh                          # Podman
#   CONTAINER_ENGINE=docker bash scripts/container-test.sh  # Docker
#
#  1. builds the image (scripts/container-build.sh --local-base: from
#     Debian's packages, no registry) and a PostgreSQL 15 image from the
#     same base (container/postgres.Containerfile), and reports their sizes;
#  2. checks the image's layers and configuration hold no secret;
#  3. starts one desktop three times (the token a Podman secret mounted for
#     the user acu, or under Docker a bind-mounted file of mode 0440 group
#     1000; ACU_TOKEN_FILE) and reports start to first /health ok;
#     checks the token is required, a foreign Host refused, the allowed name
#     accepted, the health check healthy, the daemon not root and the token
#     in no process's environment;
#  4. through the published port: launches a GTK dialog, smart-waits for
#     its text with the OCR judge, clicks its Yes button by element id (from
#     the accessibility tree), smart-waits for what that opens, and opens the
#     live view in Chromium from outside (scripts/liveview), whose
#     screenshot Tesseract must read that text from;
#  5. restarts that desktop (its runs kept in the data volume) and stops it
#     (SIGTERM: exit 0);
#  6. starts the fleet in compose.yaml (PostgreSQL and 3 desktops) with
#     podman-compose (or `podman compose`; under Docker `docker compose` or
#     docker-compose), creates a wait on desktop-1 for
#     desktop-2, which judges it on its own display, and reads the run from
#     desktop-3;
#  7. removes every container, pod, volume, network and secret it made
#     (also when it fails).
#
# It needs root (mmdebstrap, rootful Podman), podman and podman-compose (or
# Podman 4.7+'s `podman compose`), or docker and a compose, mmdebstrap,
# chromium, tesseract and Go. Under Docker, when no engine answers, it
# starts a private dockerd for its run (scripts/container-lib.sh).
# ACU_TEST_IMAGE=NAME skips building and tests that image (it must hold
# this tree's acu); the PostgreSQL image is still built when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. scripts/container-lib.sh
export PATH=/usr/local/go/bin:$PATH

t_all=$SECONDS
tag=acu-ct-$$
tmp=$(mktemp -d)
step() { printf '\n== %s (%ss)\n' "$*" "$((SECONDS - t_all))"; }
fail() { echo "container-test: FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

ctr_pick_engine || fail "no container engine"
compose=()
if [ "$CTR" = podman ]; then
	engine=podman
	if podman compose version >/dev/null 2>&1; then compose=(podman compose)
	elif command -v podman-compose >/dev/null 2>&1; then compose=(podman-compose)
	else fail "no compose: apt-get install podman-compose"
	fi
	project_label=io.podman.compose.project
else
	engine=docker
	if "$CTR" compose version >/dev/null 2>&1; then compose=("$CTR" compose)
	elif command -v docker-compose >/dev/null 2>&1; then compose=(docker-compose)
	else fail "no compose: apt-get install docker-compose"
	fi
	project_label=com.docker.compose.project
fi
ctr() { "$CTR" "$@"; }
echo "engine: $("$CTR" version --format '{{.Server.Version}}' 2>/dev/null || "$CTR" --version) ($CTR${CTR_DOCKERD_PID:+, a private dockerd: no iptables, no default bridge}); compose: $("${compose[@]}" version 2>/dev/null | head -n1)"
for p in chromium tesseract go curl python3; do
	command -v "$p" >/dev/null 2>&1 || fail "$p is missing (scripts/install-deps.sh)"
done

# compose_run ARGS: compose with the fleet's settings (compose.env) in its
# environment only, not in acu's.
compose_run() { (set -a; . "$tmp/compose.env"; set +a; cd "$root"; "${compose[@]}" -p "$tag" -f compose.yaml "$@"); }
cleanup() {
	set +e
	if [ -f "$tmp/compose.env" ]; then
		compose_run down -v >/dev/null 2>&1
	fi
	ctr ps -aq --filter "label=acu-container-test=$tag" | xargs -r "$CTR" rm -f -v >/dev/null 2>&1
	ctr ps -aq --filter "label=$project_label=$tag" | xargs -r "$CTR" rm -f -v >/dev/null 2>&1
	ctr volume ls -q --filter "label=$project_label=$tag" | xargs -r "$CTR" volume rm -f >/dev/null 2>&1
	ctr network ls -q --filter "label=$project_label=$tag" | xargs -r "$CTR" network rm >/dev/null 2>&1
	ctr network ls -q --filter "label=acu-container-test=$tag" | xargs -r "$CTR" network rm >/dev/null 2>&1
	if [ "$engine" = podman ]; then
		podman pod rm -f "pod_$tag" >/dev/null 2>&1
		podman secret rm "$tag-token" >/dev/null 2>&1
	fi
	ctr_docker_stop
	rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# health PORT: seconds until GET /health answers 200 (60 s at most).
health() {
	local t0=$EPOCHREALTIME i
	for i in $(seq 3000); do
		if curl -fsS -o /dev/null "http://127.0.0.1:$1/health" 2>/dev/null; then
			python3 -c "print(f'{$EPOCHREALTIME - $t0:.2f}')"
			return 0
		fi
		sleep 0.02
	done
	return 1
}
status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }

step "build acu for the host side (the CLI as a client, the live view's browser)"
go build -o "$tmp/acu" ./cmd/acu
go build -o "$tmp/liveview" ./scripts/liveview
acu=$tmp/acu

t=$SECONDS
if [ -n "${ACU_TEST_IMAGE:-}" ]; then
	image=$ACU_TEST_IMAGE
	ctr_local_bases
else
	step "build the desktop image"
	image=localhost/acu-desktop:test
	bash scripts/container-build.sh --local-base --tag "$image" >"$tmp/build.log" 2>&1 || { tail -40 "$tmp/build.log"; fail "the image build failed"; }
	ctr_local_bases # for CONTAINERS_CONF and CTR_BASE in this shell
fi
pgimage=localhost/acu-postgres:15
if ! ctr_image_exists "$pgimage"; then
	fmt=(); [ "$engine" = podman ] && fmt=(--format docker)
	ctr build "${fmt[@]}" "${CTR_BUILD_NET[@]}" --build-arg "BASE=$CTR_BASE" -t "$pgimage" -f container/postgres.Containerfile . >"$tmp/pgbuild.log" 2>&1 || { tail -40 "$tmp/pgbuild.log"; fail "the PostgreSQL image build failed"; }
fi
build_s=$((SECONDS - t))
size=$(ctr image inspect --format '{{.Size}}' "$image")
pgsize=$(ctr image inspect --format '{{.Size}}' "$pgimage")
echo "built in ${build_s}s: $image $((size / 1000000)) MB, $pgimage $((pgsize / 1000000)) MB"

step "no secret in the image's layers or configuration"
if [ "$engine" = podman ]; then
	podman image save --quiet --format docker-archive -o "$tmp/image.tar" "$image" >/dev/null
else
	ctr save -o "$tmp/image.tar" "$image"
fi
mkdir "$tmp/image"
tar -xf "$tmp/image.tar" -C "$tmp/image"
: >"$tmp/files"
layers=0
while IFS= read -r layer; do
	tar -tf "$tmp/image/$layer" >>"$tmp/files"
	layers=$((layers + 1))
done < <(python3 -c 'import json,sys; [print(l) for l in json.load(open(sys.argv[1]))[0]["Layers"]]' "$tmp/image/manifest.json")
# Secret-looking files: acu's state (token, relay token, database), a
# config file, keys, and the build machine's own certificate authorities
# (only the build stage may have them).
if grep -E '(^|/)var/lib/acu/.|(^|/)home/acu/\.(local|config)/|(^|/)acu\.env$|(^|/)(relay-)?token$|\.key$|id_(rsa|ed25519)|usr/local/share/ca-certificates/.' "$tmp/files"; then
	fail "the files above are in the image's layers"
fi
env_json=$(ctr image inspect --format '{{json .Config.Env}}' "$image")
if grep -qiE '(TOKEN|PASSWORD|SECRET|API_KEY)=[^",]' <<<"$env_json"; then
	fail "the image's environment holds a secret: $env_json"
fi
history=$(ctr image history --no-trunc --format '{{.CreatedBy}}' "$image")
if grep -qiE '(TOKEN|PASSWORD|API_KEY)=[^ "]' <<<"$history"; then
	fail "a build step sets a secret"
fi
pass "$layers layers, $(wc -l <"$tmp/files") files: no token, database, key or config file; environment and history hold no secret"
rm -rf "$tmp/image" "$tmp/image.tar"

step "one desktop: start to health, three times"
token=$(head -c 32 /dev/urandom | base64 | tr -d '/+=\n')
if [ "$engine" = podman ]; then
	printf '%s' "$token" | podman secret create "$tag-token" - >/dev/null
	secret=(--secret "$tag-token,type=mount,uid=1000,gid=1000,mode=0400,target=acu-token")
else
	# Docker without swarm has no secrets: a bind-mounted file the
	# container's group (1000) may read, nobody else.
	( umask 077; printf '%s' "$token" >"$tmp/acu-token" )
	chgrp 1000 "$tmp/acu-token"
	chmod 0440 "$tmp/acu-token"
	secret=(-v "$tmp/acu-token:/run/secrets/acu-token:ro")
fi
port=$(free_port)
net=()
if [ -n "${CTR_RUN_NET:-}" ]; then
	# The private dockerd has no default bridge (container-lib.sh): a
	# network of this run's own.
	ctr network create --label "acu-container-test=$tag" "$tag-net" >/dev/null
	net=(--network "$tag-net")
fi
run_one() {
	ctr run -d --name "$1" --label "acu-container-test=$tag" "${net[@]}" \
		-p "127.0.0.1:$port:18790" --shm-size 1g \
		"${secret[@]}" \
		-e ACU_TOKEN_FILE=/run/secrets/acu-token -e ACU_ALLOWED_HOSTS=desktop.test \
		"$image" >/dev/null 2>"$tmp/run.err" || { cat "$tmp/run.err"; fail "$engine run failed"; }
}
times=()
for i in 1 2 3; do
	t0=$EPOCHREALTIME
	run_one "$tag-one-$i"
	health "$port" >/dev/null || { ctr logs "$tag-one-$i" 2>&1 | tail -20; fail "desktop $i never answered /health"; }
	times+=("$(python3 -c "print(f'{$EPOCHREALTIME - $t0:.2f}')")")
	if [ "$i" -lt 3 ]; then ctr rm -f -v "$tag-one-$i" >/dev/null 2>&1; fi
done
one=$tag-one-3
echo "$engine run to first /health ok: ${times[*]} s"

step "one desktop: token, Host check, health check, user"
base=http://127.0.0.1:$port
[ "$(status "$base/v1/runs")" = 401 ] || fail "GET /v1/runs without the token is not 401"
[ "$(status -H "Authorization: Bearer wrong" "$base/v1/runs")" = 401 ] || fail "a wrong token is not 401"
[ "$(status -H "Authorization: Bearer $token" "$base/v1/runs")" = 200 ] || fail "the mounted secret's token is refused"
[ "$(status -H "Host: evil.test" -H "Authorization: Bearer $token" "$base/v1/runs")" = 403 ] || fail "a foreign Host is not refused"
[ "$(status -H "Host: desktop.test:18790" -H "Authorization: Bearer $token" "$base/v1/runs")" = 200 ] || fail "the allowed Host (ACU_ALLOWED_HOSTS) is refused"
pass "401 without or with a wrong token; 403 for Host evil.test; 200 for the token and for Host desktop.test"
if [ "$engine" = podman ]; then
	podman healthcheck run "$one" >/dev/null 2>&1 || fail "the image's HEALTHCHECK is not healthy"
else
	# Docker runs the check itself: the first after the 10 s interval.
	for i in $(seq 150); do
		h=$(ctr inspect --format '{{.State.Health.Status}}' "$one")
		[ "$h" = healthy ] && break
		sleep 0.2
	done
	[ "$h" = healthy ] || fail "the image's HEALTHCHECK is $h, not healthy"
fi
pass "HEALTHCHECK (curl /health inside) healthy"
if [ "$engine" = podman ]; then
	users=$(podman top "$one" user args | awk 'NR>1 && /acu serve/ {print $1}')
else
	# docker top runs the host's ps: the container's user acu is uid 1000.
	users=$(ctr top "$one" -o pid,uid,args | awk 'NR>1 && /acu serve/ {print $2}')
	[ "$users" = 1000 ] && users=acu
fi
[ "$users" = acu ] || fail "acu serve runs as '$users', not acu"
ctr exec "$one" sh -c 'cat /proc/[0-9]*/environ 2>/dev/null' | tr '\0' '\n' | grep -qF "$token" && fail "the token is in a process's environment"
ctr inspect --format '{{json .Config.Env}}' "$one" | grep -qF "$token" && fail "the token is in the container's configuration"
pass "acu serve runs as acu; the token is in no environment (a mounted file, read-only to the container's user)"

step "one desktop: a smart wait, a click on a GTK button, the live view from outside"
export ACU_DAEMON_PORT=$port ACU_TOKEN=$token ACU_DATA_DIR=$tmp/client
mkdir -m 0700 "$ACU_DATA_DIR"
"$acu" launch --wait -- sh -c "zenity --question --title 'Ship check' --text 'Ship it now?' && zenity --info --title Shipped --text 'Shipped OK'" >/dev/null
t0=$SECONDS
"$acu" wait '"Ship it now?" is visible' --timeout 60 || fail "the wait for the dialog's text did not resolve"
pass "smart wait (OCR judge) resolved in $((SECONDS - t0))s"
"$acu" elements >"$tmp/elements.txt"
grep -E '^\[btn_yes\] button "Yes"' "$tmp/elements.txt" || { cat "$tmp/elements.txt"; fail "no Yes button in the element map (AT-SPI)"; }
"$acu" act click btn_yes
"$acu" wait '"Shipped OK" is visible' --timeout 60 || fail "clicking Yes did not open the next dialog"
pass "clicked btn_yes (the accessibility tree's button) and the next dialog came"
url=$("$acu" open /ui/ 2>/dev/null | head -n1)
case "$url" in "http://127.0.0.1:$port/ui/#code="*) ;; *) fail "acu open printed $url" ;; esac
"$tmp/liveview" -url "$url" -o "$tmp/live.png" -timeout 60s
tesseract "$tmp/live.png" - --psm 11 2>/dev/null | tee "$tmp/live.txt" | grep -q 'Shipped OK' || { cat "$tmp/live.txt"; fail "the live view's screenshot does not show the desktop's dialog"; }
pass "the live view in Chromium shows 'Shipped OK' (Tesseract on the page's screenshot)"
[ -n "${ACU_TEST_KEEP_SHOT:-}" ] && cp "$tmp/live.png" "$ACU_TEST_KEEP_SHOT"
inside=$(ctr exec "$one" acu open /ui/ 2>/dev/null | head -n1)
case "$inside" in "http://127.0.0.1:18790/ui/#code="*) ;; *) fail "acu open inside the container printed $inside" ;; esac
pass "acu open inside the container links to 127.0.0.1:18790 (the port published on the host's loopback)"
runs_before=$(curl -fsS -H "Authorization: Bearer $token" "$base/v1/runs?kind=wait" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
ctr restart "$one" >/dev/null 2>&1 || fail "$engine restart failed"
health "$port" >/dev/null || { ctr logs "$one" 2>&1 | tail -20; fail "the restarted desktop never answered /health"; }
runs_after=$(curl -fsS -H "Authorization: Bearer $token" "$base/v1/runs?kind=wait" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
[ "$runs_after" = "$runs_before" ] && [ "$runs_after" -ge 2 ] || fail "the data volume lost runs across a restart ($runs_before, then $runs_after)"
ctr stop -t 10 "$one" >/dev/null 2>&1
code=$(ctr inspect --format '{{.State.ExitCode}}' "$one")
[ "$code" = 0 ] || fail "acu serve exited $code on $engine stop (SIGTERM), not 0"
pass "$engine restart brings the desktop back with its runs (the data volume); $engine stop ends it cleanly (exit 0)"
ctr rm -f -v "$one" >/dev/null 2>&1
[ "$engine" = podman ] && podman secret rm "$tag-token" >/dev/null
unset ACU_DAEMON_PORT ACU_TOKEN

step "the fleet: PostgreSQL and 3 desktops with compose"
FLEET_SECRETS_DIR=$tmp/secrets bash scripts/fleet-secrets.sh >/dev/null
ports=("$(free_port)" "$(free_port)" "$(free_port)")
cat >"$tmp/compose.env" <<EOF
FLEET_IMAGE=$image
FLEET_POSTGRES_IMAGE=$pgimage
FLEET_SECRETS_DIR=$tmp/secrets
FLEET_PORT_1=${ports[0]}
FLEET_PORT_2=${ports[1]}
FLEET_PORT_3=${ports[2]}
EOF
t0=$EPOCHREALTIME
compose_run up -d >"$tmp/compose.log" 2>&1 || { cat "$tmp/compose.log"; fail "compose up failed"; }
for p in "${ports[@]}"; do
	health "$p" >/dev/null || { ctr ps -a --filter "label=$project_label=$tag"; compose_run logs --tail 20 2>&1 | tail -60; fail "a desktop on port $p never answered /health"; }
done
fleet_s=$(python3 -c "print(f'{$EPOCHREALTIME - $t0:.1f}')")
echo "compose up to 3 healthy desktops: ${fleet_s} s"
token=$(cat "$tmp/secrets/acu-token")
export ACU_TOKEN=$token
# Every desktop registers with the database; wait until desktop-1 sees all.
for i in $(seq 100); do
	hosts=$(ACU_DAEMON_PORT=${ports[0]} "$acu" hosts 2>/dev/null || true)
	if grep -q desktop-1 <<<"$hosts" && grep -q desktop-2 <<<"$hosts" && grep -q desktop-3 <<<"$hosts"; then break; fi
	sleep 0.2
done
echo "$hosts"
grep -q desktop-3 <<<"$hosts" || fail "desktop-1 does not list the 3 hosts"
pass "desktop-1 lists desktop-1, desktop-2 and desktop-3 on the shared PostgreSQL"
ACU_DAEMON_PORT=${ports[1]} "$acu" launch --wait -- zenity --info --title Fleet --text 'Fleet ready' >/dev/null
out=$(ACU_DAEMON_PORT=${ports[0]} "$acu" wait --host desktop-2 --timeout 60 '"Fleet ready" is visible') || { echo "$out"; fail "the wait created on desktop-1 for desktop-2 did not resolve"; }
echo "$out"
id=$(grep -oE 'Job [a-z]+_[a-z0-9]+' <<<"$out" | head -n1 | cut -d' ' -f2)
[ -n "$id" ] || fail "no job id in: $out"
run=$(curl -fsS -H "Authorization: Bearer $token" "http://127.0.0.1:${ports[2]}/v1/runs/$id")
python3 - "$run" <<'PY' || fail "desktop-3's view of the run: $run"
import json, sys
r = json.loads(sys.argv[1])
run = r.get("run", r)
assert run.get("host") == "desktop-2", run.get("host")
assert run.get("status") == "resolved", run.get("status")
print("ok: desktop-3 reads run", run.get("id"), "host", run.get("host"), "status", run.get("status"))
PY
pass "a wait created on desktop-1 was judged on desktop-2's display; desktop-3 reads it"
unset ACU_TOKEN
t0=$SECONDS
compose_run down -v >>"$tmp/compose.log" 2>&1 || { cat "$tmp/compose.log"; fail "compose down failed"; }
rm -f "$tmp/compose.env"
left=$(ctr ps -aq --filter "label=$project_label=$tag")
[ -z "$left" ] || fail "compose down left containers: $left"
pass "compose down removed the fleet in $((SECONDS - t0))s"

step "summary"
echo "image $image: $((size / 1000000)) MB (PostgreSQL image $((pgsize / 1000000)) MB); built in ${build_s}s"
echo "engine: $engine; start to first /health ok (one desktop, 3 runs): ${times[*]} s"
echo "fleet (PostgreSQL + 3 desktops) up and healthy in ${fleet_s} s"
echo "total: $((SECONDS - t_all)) s"
echo "container-test: all checks passed"
