#!/usr/bin/env bash
# pretest: the system tools the tests drive, installed when we can.
# - Chromium and ffprobe: the docs test renders dist/docs/index.html, and the video test
#   plays a video, in Debian's chromium through playwright-core, and reads the video's
#   streams with Debian's ffprobe (a test tool only: the server encodes with the FFmpeg of
#   its npm dependencies). Playwright's own browser download needs internet that machines
#   here do not have, so the system packages are the tools.
# - PostgreSQL and Redis server binaries: the scaled tests start servers of their own from
#   them (server/test/support/scaledServices.ts), unless TEST_DATABASE_URL and
#   TEST_REDIS_URL name servers to use.
# - curl: the README's quickstart, which test/readme.test.ts runs as written, uses it.
set -euo pipefail

if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then
  echo "Usage: npm run pretest   (bash scripts/ensure-test-tools.sh; npm test runs it first)"
  echo
  echo "Installs what the tests drive and this machine lacks (chromium, ffmpeg, curl,"
  echo "postgresql, redis-server) when run as root, else says what to install; exits 0"
  echo "when all are there."
  exit 0
fi

CHROMIUM=/usr/bin/chromium
FFPROBE=/usr/bin/ffprobe

have_postgres() {
  command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ] && return 0
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}

missing=()
[ -x "$CHROMIUM" ] || missing+=(chromium)
[ -x "$FFPROBE" ] || missing+=(ffmpeg)
command -v curl >/dev/null 2>&1 || missing+=(curl)
if [ -z "${TEST_DATABASE_URL:-}" ] && ! have_postgres; then missing+=(postgresql); fi
if [ -z "${TEST_REDIS_URL:-}" ] && ! command -v redis-server >/dev/null 2>&1; then missing+=(redis-server); fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-test-tools: installing the Debian package(s) ${missing[*]}..." >&2
  export DEBIAN_FRONTEND=noninteractive
  # Debian's postgresql and redis-server packages start a service of their own where
  # they can; the tests never use it, so policy-rc.d keeps them from starting.
  policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    # Removed however this script ends: left behind, it would stop every service start.
    trap 'rm -f "$policy"' EXIT
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy"
  fi
  status=0
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" || status=$?
  [ "$status" -eq 0 ] || { echo "ensure-test-tools: apt-get install ${missing[*]} failed (exit $status)." >&2; exit 1; }
  exit 0
fi

echo "ensure-test-tools: the tests need ${missing[*]}: install it (Debian: sudo apt-get install -y ${missing[*]}; as root this script does it by itself), or set TEST_DATABASE_URL and TEST_REDIS_URL for PostgreSQL and Redis servers of your own" >&2
exit 1
