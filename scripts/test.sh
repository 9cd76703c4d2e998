#!/usr/bin/env bash
# Every check of `pnpm test`: Biome (format and lint), no import circles (madge), the server's folders importing only
# downward (scripts/server-rooms.ts), a doc comment on every export of
# the SDK and the schema with examples that type-check (scripts/documented-exports.ts), each package's type-check and
# tests under turbo, then, on what turbo built, the reliability suite against the built server (scripts/reliability.sh)
# beside the durability suite (the built server and `pnpm start` killed and restarted on their own data) and the
# scale-out test: three instances behind nginx on one Postgres database (scripts/scale.sh), and then the production
# rehearsal: the built server configured from deploy/agent-tools.env.example against chains that mine on an interval,
# RPC proxies, x402's reference facilitator and upstreams with a key budget (scripts/production.sh).
# A failure does not hide the rest: Biome's result does not stop turbo, and turbo keeps running every task whose
# dependencies built (--continue), so each package reports. Exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
biome ci . || status=1
pnpm --silent circles || status=1
pnpm --silent rooms || status=1
pnpm --silent exports:documented || status=1
turbo run typecheck test --continue=dependencies-successful "$@" || status=1
# turbo built every package above. The reliability suite runs beside the durability suite, and beside the scale-out
# test followed by the production rehearsal: side by side they keep both cores busy to the end, where the server's
# last test files alone would leave one idle (docs/architecture.md, "What a test run costs"). The others' output is
# kept and printed after the reliability suite's, each whole.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
(
  pnpm --filter @agent-tools/server test:scale >"$logs/scale" 2>&1
  echo $? >"$logs/scale.status"
  pnpm --filter @agent-tools/server test:production >"$logs/production" 2>&1
  echo $? >"$logs/production.status"
) &
beside=$!
(
  pnpm --filter @agent-tools/server test:durability >"$logs/durability" 2>&1
  echo $? >"$logs/durability.status"
) &
durable=$!
pnpm --filter @agent-tools/server test:reliability || status=1
wait "$beside" "$durable"
for suite in durability scale production; do
  echo
  echo "── ${suite} (run beside the reliability suite) ──"
  cat "$logs/$suite"
  [ "$(cat "$logs/$suite.status" 2>/dev/null)" = 0 ] || status=1
done
exit "$status"
