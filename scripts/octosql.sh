#!/usr/bin/env bash
# OctoSQL (github.com/cube2222/octosql), a Go streaming SQL engine, as the
# peer `clink bench e2e` holds clink against (figure "groupby
# clink/octosql"; the suite skips it, saying why, without a binary).
#
#   scripts/octosql.sh build   go install it into ~/.cache/clink/bin (where
#                              the suite looks, besides PATH)
#   scripts/octosql.sh path    print the binary's path if it is installed
#
# The suite runs it as
#   OCTOSQL_NO_TELEMETRY=1 octosql "SELECT k, COUNT(*), SUM(v), MAX(v) FROM ev.csv GROUP BY k" --output csv
# in the input's directory (a CSV file is a table named by its file name;
# its header names the columns).
#
# On this project's machines (checked when the suite was written) the Go
# module proxy refuses the module: `go install
# github.com/cube2222/octosql@latest` fails with "403 Forbidden: This
# module version is not available", for @v0.13.0 too. Where the proxy
# serves it, build works as below; otherwise install a release binary of
# octosql by hand onto PATH.
set -euo pipefail

BIN=${CLINK_TOOLS:-$HOME/.cache/clink}/bin
VERSION=${OCTOSQL_VERSION:-latest}

case "${1:-}" in
build)
	if [[ -x $BIN/octosql ]]; then
		echo "octosql.sh: $BIN/octosql already built"
		exit 0
	fi
	mkdir -p "$BIN"
	echo "octosql.sh: go install github.com/cube2222/octosql@$VERSION into $BIN"
	if ! GOBIN=$BIN go install "github.com/cube2222/octosql@$VERSION"; then
		echo "octosql.sh: go install failed (the module proxy may not serve octosql here; see the comment at the top)" >&2
		exit 1
	fi
	echo "octosql.sh: built $BIN/octosql"
	;;
path)
	if command -v octosql >/dev/null; then
		command -v octosql
	elif [[ -x $BIN/octosql ]]; then
		echo "$BIN/octosql"
	else
		echo "octosql.sh: not installed (scripts/octosql.sh build)" >&2
		exit 1
	fi
	;;
*)
	echo "usage: scripts/octosql.sh build|path" >&2
	exit 2
	;;
esac
