#!/usr/bin/env bash
# `pnpm test:reliability [--full]`: the reliability suite (apps/server/reliability) against the built server in a
# child process: fuzzing from the OpenAPI document, payment abuse with real signatures, upstream faults, SIGKILL under
# paid load and a soak. The default is sized for CI; --full runs 10,000 fuzz requests, 4 kills and a 60 s soak.
# Its two files run side by side; each prints one summary line ("reliability: payment ..., faults ..." and
# "reliability: fuzz ..., crash ..., soak ...").
set -euo pipefail
cd "$(dirname "$0")/.."
for arg in "$@"; do
  case "$arg" in
    --full) export RELIABILITY=full ;;
    *) echo "usage: pnpm test:reliability [--full]" >&2; exit 2 ;;
  esac
done
turbo run build --filter=@agent-tools/server... --output-logs=errors-only
pnpm --filter @agent-tools/server test:reliability
