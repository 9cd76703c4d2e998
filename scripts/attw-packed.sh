#!/usr/bin/env bash
# The package in the current directory as it is published: packed (pnpm pack) into a directory of its own and
# checked there by Are The Types Wrong. `attw --pack` packs into the package itself and deletes the tarball after,
# which would also delete one a user packed there.
set -euo pipefail
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
pnpm pack --pack-destination "$dest" >/dev/null
attw "$dest"/*.tgz --quiet
