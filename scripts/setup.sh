#!/usr/bin/env bash
# One-time set-up of a fresh machine (Node 20 and npm are all it needs):
#   pnpm 10, the workspace's dependencies (including the Node 24 runtime the scripts run on), a build of every
#   package, and with --with-browser Debian's Chromium for the browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."

with_browser=false
for arg in "$@"; do
  case "$arg" in
    --with-browser) with_browser=true ;;
    *) echo "setup: unknown option $arg (known: --with-browser)" >&2; exit 2 ;;
  esac
done

if ! command -v pnpm >/dev/null 2>&1 || [[ "$(pnpm --version)" != 10.* ]]; then
  echo "setup: installing pnpm 10"
  npm install -g pnpm@10 --no-fund --no-audit --loglevel=error
fi

if [[ "${CI:-}" == "true" ]]; then
  pnpm install --frozen-lockfile --reporter=append-only
else
  pnpm install --reporter=append-only
fi

# Build every package once now, so that `pnpm start` and `pnpm test` find them built (turbo caches the result).
pnpm build --output-logs=errors-only

if $with_browser; then
  chromium_path="${CHROMIUM_PATH:-/usr/bin/chromium}"
  if [[ ! -x "$chromium_path" ]]; then
    if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null 2>&1; then
      echo "setup: installing Debian's chromium for the browser tests"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
      echo "setup: the browser tests need Chromium at $chromium_path (apt-get install chromium, or set CHROMIUM_PATH)" >&2
      exit 1
    fi
  fi
fi
echo "setup: done"
