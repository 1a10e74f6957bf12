#!/usr/bin/env bash
# pretest: the docs test renders dist/docs/index.html, and the video test plays a video,
# in Debian's chromium through playwright-core; the video test also reads the video's
# streams with Debian's ffprobe (a test tool only: the server encodes with the FFmpeg of
# its npm dependencies). Playwright's own browser download needs internet that CI
# machines here do not have, so the system packages are the tools; install them when we can.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
FFPROBE=/usr/bin/ffprobe

missing=()
[ -x "$CHROMIUM" ] || missing+=(chromium)
[ -x "$FFPROBE" ] || missing+=(ffmpeg)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: installing the Debian package(s) ${missing[*]}..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${missing[@]}"
  if [ -x "$CHROMIUM" ] && [ -x "$FFPROBE" ]; then
    exit 0
  fi
  echo "ensure-chromium: apt-get finished but $CHROMIUM or $FFPROBE is still missing." >&2
  exit 1
fi

cat >&2 <<EOT
ensure-chromium: the tests need Chromium at $CHROMIUM and ffprobe at $FFPROBE, and ${missing[*]} is not there.
Install it, then run the tests again:
  Debian/Ubuntu:  sudo apt-get update && sudo apt-get install -y ${missing[*]}
(As root with apt-get available, this script installs it by itself.)
EOT
exit 1
