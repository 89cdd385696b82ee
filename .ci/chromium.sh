#!/usr/bin/env bash
# .ci/chromium.sh — find a headless-capable Chromium for the browser tests and print its path.
# Every message goes to stderr. In order it uses: $KASSA_CHROMIUM when executable; Debian's
# chromium (/usr/lib/chromium/chromium) or chromium/chromium-browser/google-chrome on PATH; and
# as a last resort installs Debian's `chromium` package with apt-get, saying so.
set -euo pipefail

log() { echo "chromium.sh: $*" >&2; }

find_browser() {
	if [[ -n "${KASSA_CHROMIUM:-}" && -x "${KASSA_CHROMIUM}" ]]; then
		echo "$KASSA_CHROMIUM"
		return 0
	fi
	if [[ -x /usr/lib/chromium/chromium ]]; then
		echo /usr/lib/chromium/chromium
		return 0
	fi
	local n
	for n in chromium chromium-browser google-chrome google-chrome-stable; do
		if command -v "$n" >/dev/null 2>&1; then
			command -v "$n"
			return 0
		fi
	done
	return 1
}

if p="$(find_browser)"; then
	echo "$p"
	exit 0
fi

sudo=""
if [[ "$(id -u)" != 0 ]]; then
	command -v sudo >/dev/null 2>&1 || { log "Chromium is missing and I am not root (no sudo) to install it"; exit 1; }
	sudo="sudo"
fi
command -v apt-get >/dev/null 2>&1 || { log "Chromium is missing and apt-get is unavailable; install Chromium or set KASSA_CHROMIUM"; exit 1; }
log "Chromium is not installed; installing Debian's chromium with apt-get for the browser tests (this takes a minute)"
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2
p="$(find_browser)" || { log "chromium was installed but not found"; exit 1; }
echo "$p"
