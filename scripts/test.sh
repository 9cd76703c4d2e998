#!/usr/bin/env bash
# Every check of `pnpm test`: Biome (format and lint), no import circles (madge), a doc comment on every export of
# the SDK and the schema with examples that type-check (scripts/documented-exports.ts), each package's type-check and
# tests under turbo, then the reliability suite against the built server (scripts/reliability.sh) and the scale-out
# test: three instances behind nginx on one Postgres database (scripts/scale.sh), and the production rehearsal: the
# built server configured from deploy/agent-tools.env.example against chains that mine on an interval, RPC
# proxies, x402's reference facilitator and upstreams with a key budget (scripts/production.sh).
# A failure does not hide the rest: Biome's result does not stop turbo, and turbo keeps running every task whose
# dependencies built (--continue), so each package reports. Exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
biome ci . || status=1
pnpm --silent circles || status=1
pnpm --silent exports:documented || status=1
turbo run typecheck test --continue=dependencies-successful "$@" || status=1
bash scripts/reliability.sh || status=1
bash scripts/scale.sh || status=1
bash scripts/production.sh || status=1
exit "$status"
