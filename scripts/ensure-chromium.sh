#!/usr/bin/env bash
# pretest: the docs test renders dist/docs/index.html in Debian's chromium through
# playwright-core. Playwright's own browser download needs internet that CI machines
# here do not have, so the system package is the browser; install it when we can.
set -euo pipefail

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: $CHROMIUM is missing; installing the Debian chromium package..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq chromium
  if [ -x "$CHROMIUM" ]; then
    exit 0
  fi
  echo "ensure-chromium: apt-get finished but $CHROMIUM is still missing." >&2
  exit 1
fi

cat >&2 <<EOF
ensure-chromium: the docs test needs Chromium at $CHROMIUM and it is not there.
Install it, then run the tests again:
  Debian/Ubuntu:  sudo apt-get update && sudo apt-get install -y chromium
(As root with apt-get available, this script installs it by itself.)
EOF
exit 1
