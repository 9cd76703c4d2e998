#!/usr/bin/env bash
# `pnpm test:scale`: three instances of the built server on one Postgres database behind nginx, under paid load
# (apps/server/scale). Needs Debian's postgresql and nginx (`npm run setup -- --with-postgres --with-nginx`).
# Prints one summary line ("scale: replay ..., sign-in ..., rate ..., kill ..., throughput ...").
set -euo pipefail
cd "$(dirname "$0")/.."
turbo run build --filter=@agent-tools/server... --output-logs=errors-only
pnpm --filter @agent-tools/server test:scale
