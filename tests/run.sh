#!/usr/bin/env bash
# The README's test command: installs everything a fresh Debian/Ubuntu machine needs, then runs the suite.
set -euo pipefail
cd "$(dirname "$0")/.."

# System packages: Chromium for the page tests, EGL/Mesa for the headless renderer, espeak-ng for speech.
need=(chromium libegl1 libegl-mesa0 libgl1-mesa-dri libgles2 espeak-ng)
missing=()
for p in "${need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The training smoke test needs torch: this pair is the one that works on a CPU-only machine here
# (PyPI's newest torchvision breaks beside the CPU torch wheel), so pin it before the extras.
python3 -m pip install -q --disable-pip-version-check torch==2.14.1 torchvision==0.29.1
python3 -m pip install -q --disable-pip-version-check -e '.[test,train,openvino]'

# axe-core for the accessibility scan, served locally to the page under test (never from a CDN).
if [ ! -f .cache/npm/node_modules/axe-core/axe.min.js ]; then
  npm install --silent --no-audit --no-fund --prefix .cache/npm axe-core@4 >/dev/null
fi

exec python3 -m pytest "$@"
