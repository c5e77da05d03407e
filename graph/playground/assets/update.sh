#!/bin/sh
# Re-fetches the playground's vendored files from npm at the pinned versions and copies
# them here unchanged, so the embedded assets can be rebuilt and checked byte for byte.
# Needs npm and network access; change a version below and in VERSIONS together.
set -eu

GRAPHIQL=3.8.3
REACT=18.3.1

here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cd "$scratch"
npm init -y >/dev/null
# --ignore-scripts: nothing from the packages runs here; only files are copied out.
npm install --no-audit --no-fund --ignore-scripts --save-exact \
	"graphiql@$GRAPHIQL" "react@$REACT" "react-dom@$REACT" >/dev/null

cp node_modules/graphiql/graphiql.min.js \
	node_modules/graphiql/graphiql.min.css \
	node_modules/react/umd/react.production.min.js \
	node_modules/react-dom/umd/react-dom.production.min.js \
	"$here/"
cp node_modules/graphiql/LICENSE "$here/LICENSE.graphiql"
cp node_modules/react/LICENSE "$here/LICENSE.react" # react-dom ships the same text

cd "$here"
sha256sum graphiql.min.js graphiql.min.css react.production.min.js react-dom.production.min.js
