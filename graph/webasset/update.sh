#!/bin/sh
# Re-fetches the development pages' shared vendored file from npm at the pinned version and copies it
# here unchanged, so the embedded asset can be rebuilt and checked byte for byte.
# Needs npm and network access; change the version below and in VERSIONS together.
set -eu

GRAPHQL_WS=6.4.2

here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cd "$scratch"
npm init -y >/dev/null
# --ignore-scripts: nothing from the package runs here; only files are copied out.
npm install --no-audit --no-fund --ignore-scripts --save-exact "graphql-ws@$GRAPHQL_WS" >/dev/null

cp node_modules/graphql-ws/umd/graphql-ws.min.js "$here/"
cp node_modules/graphql-ws/LICENSE.md "$here/LICENSE.graphql-ws"

cd "$here"
sha256sum graphql-ws.min.js
