#!/usr/bin/env bash
# One-time set-up of a fresh machine (Node 20 and npm are all it needs):
#   pnpm 10, the workspace's dependencies (including the Node 24 runtime the scripts run on), a build of every
#   package; with --with-browser Debian's Chromium for the browser tests, with --with-postgres Debian's
#   PostgreSQL server for the tests that run the store on Postgres too (they start their own throwaway cluster), and
#   with --with-nginx Debian's nginx for `pnpm test:scale` (it starts its own, on loopback ports of its own), and
#   with --with-prometheus Debian's prometheus for its promtool, which checks the alert rules in deploy/prometheus.
set -euo pipefail
cd "$(dirname "$0")/.."

with_browser=false
with_postgres=false
with_nginx=false
with_prometheus=false
for arg in "$@"; do
  case "$arg" in
    --with-browser) with_browser=true ;;
    --with-postgres) with_postgres=true ;;
    --with-nginx) with_nginx=true ;;
    --with-prometheus) with_prometheus=true ;;
    *) echo "setup: unknown option $arg (known: --with-browser, --with-postgres, --with-nginx, --with-prometheus)" >&2; exit 2 ;;
  esac
done

# Debian packages, installed together (one apt-get update) when asked for and missing.
apt_packages=()

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
# The embedded database's initdb (some seconds of CPU) runs now, once per machine, rather than in the first `pnpm start`.
node apps/server/dist/prepare-store.js

if $with_browser && [[ ! -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]]; then
  apt_packages+=(chromium)
fi
if $with_postgres && ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  apt_packages+=(postgresql)
fi
if $with_nginx && ! command -v nginx >/dev/null 2>&1 && [[ ! -x /usr/sbin/nginx ]]; then
  apt_packages+=(nginx)
fi
# Only promtool is used: prometheus without its recommended node exporter.
apt_lean_packages=()
if $with_prometheus && ! command -v promtool >/dev/null 2>&1; then
  apt_lean_packages+=(prometheus)
fi
all_packages=("${apt_packages[@]}" "${apt_lean_packages[@]}")
if (( ${#all_packages[@]} > 0 )); then
  if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian's ${all_packages[*]} for the tests"
    # The packages' own services (a Postgres cluster, nginx on port 80, Prometheus) are not started: the tests start
    # theirs, and use Prometheus's promtool only.
    no_services=false
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
      printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && no_services=true
    fi
    installed=0
    {
      apt-get update -qq &&
        if (( ${#apt_packages[@]} > 0 )); then
          DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt_packages[@]}" >/dev/null
        fi &&
        if (( ${#apt_lean_packages[@]} > 0 )); then
          DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${apt_lean_packages[@]}" >/dev/null
        fi
    } || installed=$?
    if $no_services; then rm -f /usr/sbin/policy-rc.d; fi
    (( installed == 0 )) || exit "$installed"
  else
    echo "setup: the tests need ${all_packages[*]} (apt-get install ${all_packages[*]}; or CHROMIUM_PATH for another Chromium)" >&2
    exit 1
  fi
fi
echo "setup: done"
