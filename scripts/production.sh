#!/usr/bin/env bash
# `pnpm test:production`: the production rehearsal (apps/server/production): the built server configured from
# deploy/agent-tools.env.example and started with deploy/agent-tools.service's command, on Postgres, against chains
# that mine on an interval behind RPC proxies, x402's reference facilitator behind a dead first one, and upstreams
# with a key budget; a session with the built command line. Needs Debian's postgresql (`npm run setup --
# --with-postgres`). Prints one line of figures ("production: ...").
set -euo pipefail
cd "$(dirname "$0")/.."
turbo run build --filter=@agent-tools/server... --filter=@agent-tools/cli... --output-logs=errors-only
pnpm --filter @agent-tools/server test:production
