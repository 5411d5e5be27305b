#!/usr/bin/env bash
# cli_help.sh - scenario test of every command's --help against its parser,
# through the binary: `cuco help CMD` prints what `cuco CMD --help` prints,
# and each flag that --help lists is one the command takes, as
# "--flag value" and as "--flag=value" (-o as "-o value" only): a known flag
# with any value stops at the unknown one after it, before the command does
# anything. The old names kept for users' scripts still parse.
#
#   bash tests/cli_help.sh <path-to-cuco>      (CUCO_HOME: the source tree)
#
# Needs no GPU and no compiler. Prints one line per failure and
# "N passed, N failed" last; exits 1 on any failure.
set -u

if [ $# -ne 1 ]; then
	echo "usage: bash tests/cli_help.sh <path-to-cuco>" >&2
	exit 2
fi
CUCO=$1
case $CUCO in
/*) ;;
*) CUCO=$PWD/$CUCO ;;
esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuco-cli-help.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
export CUCO_STATE=$TMP/state
export CUCO_STORE=$TMP/default.db
cd "$TMP" || exit 2

pass=0
fail=0

failed() {
	fail=$((fail + 1))
	printf 'FAIL: %s: %s\n' "$1" "$2"
}

# known CMD FLAG...: the command line stops at --zzz-unknown (exit 5, named), not at FLAG.
known() {
	local cmd=$1 rc first
	shift
	"$CUCO" "$cmd" "$@" --zzz-unknown >"$TMP/out" 2>"$TMP/err"
	rc=$?
	first=$(head -n 1 "$TMP/err")
	case $first in
	"cuco $cmd: unknown option $1" | "cuco $cmd: unknown option ${1%%=*}")
		failed "$cmd $*" "the parser does not take $1"
		;;
	*)
		if [ "$rc" -ne 5 ] || [ -s "$TMP/out" ]; then
			failed "$cmd $*" "exit $rc, expected a usage error (5) and nothing on stdout"
		else
			pass=$((pass + 1))
		fi
		;;
	esac
}

cmds=$("$CUCO" --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p')
[ "$(printf '%s\n' "$cmds" | wc -l)" -ge 12 ] || failed "cuco --help" "lists fewer than 12 commands"
for cmd in $cmds; do
	"$CUCO" "$cmd" --help >"$TMP/help" 2>"$TMP/help.err"
	rc=$?
	"$CUCO" help "$cmd" >"$TMP/help2" 2>&1
	if [ "$rc" -ne 0 ] || [ -s "$TMP/help.err" ]; then
		failed "$cmd --help" "exit $rc or output on stderr"
	elif ! cmp -s "$TMP/help" "$TMP/help2"; then
		failed "help $cmd" "differs from '$cmd --help'"
	else
		pass=$((pass + 1))
	fi
	flags=$(sed -n 's/^  \(-[-a-z0-9]*\).*/\1/p' "$TMP/help")
	[ -n "$flags" ] || failed "$cmd --help" "lists no flag"
	for flag in $flags; do
		known "$cmd" "$flag" 1
		case $flag in --*) known "$cmd" "$flag=1" ;; esac
	done
done
# --children, the old name of --children-per-island (docs/search.md)
known evolve --children 2
"$CUCO" evolve --help | grep -q -- '^  --children ' && failed "evolve --help" "lists the old --children"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
