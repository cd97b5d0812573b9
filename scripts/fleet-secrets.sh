#!/usr/bin/env bash
# Makes the secrets compose.yaml mounts, once, in ./secrets (or
# FLEET_SECRETS_DIR): a random API token for the desktops, a random password
# for PostgreSQL's user acu, and the ACU_DB line that holds it. Files that
# exist are kept. Each is readable by its owner and by the group the
# container's user runs as (acu: 1000; postgres: 999), nobody else.
#
# Rootless Podman maps container ids into your subordinate range: run this
# script under `podman unshare` so the groups are the containers' own.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${FLEET_SECRETS_DIR:-./secrets}
install -d -m 0755 "$dir"
rand() { head -c 32 /dev/urandom | base64 | tr -d '/+=\n' | head -c 40; }
put() { # put FILE GID CONTENT
	[ -s "$1" ] && return 0
	( umask 077; printf '%s\n' "$3" > "$1" )
	chgrp "$2" "$1"
	chmod 0440 "$1"
	echo "fleet-secrets: wrote $1"
}
put "$dir/acu-token" 1000 "$(rand)"
put "$dir/pg-password" 999 "$(rand)"
pw=$(cat "$dir/pg-password")
put "$dir/acu-db.env" 1000 "ACU_DB=postgres://acu:$pw@postgres:5432/acu?sslmode=disable"
