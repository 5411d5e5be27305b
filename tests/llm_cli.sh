#!/usr/bin/env bash
# llm_cli.sh - scenario test of `cuco evolve`'s LLM flags without a model
# server: an LLM operator without an endpoint or model is refused (exit 5)
# before anything runs, naming the flag and the variable to set; flag misuse
# is a usage error; --help documents the flags.
#
#   bash tests/llm_cli.sh <path-to-cuco>      (CUCO_HOME: the source tree)
set -u

if [ $# -ne 1 ]; then
	echo "usage: bash tests/llm_cli.sh <path-to-cuco>" >&2
	exit 2
fi
CUCO=$1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuco-llm-cli.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
export CUCO_STATE=$TMP/state
export CUCO_STORE=$TMP/cuco.db
unset CUCO_LLM_BASE_URL CUCO_LLM_MODEL
pass=0
fail=0

# expect CODE TEXT ARGS...: cuco exits CODE and its stderr contains TEXT
expect() {
	local code=$1 text=$2 out rc
	shift 2
	out=$("$CUCO" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -ne "$code" ] || [[ $out != *"$text"* ]]; then
		echo "FAIL: cuco $*: exit $rc (want $code), stderr: $out"
		fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
}

expect 5 "give --llm-base-url URL or set CUCO_LLM_BASE_URL" evolve gemm_allgather --operator llm
expect 5 "give --llm-base-url URL or set CUCO_LLM_BASE_URL" evolve gemm_allgather --operator mixed
expect 5 "give --llm-model NAME or set CUCO_LLM_MODEL" evolve gemm_allgather --operator llm \
	--llm-base-url http://127.0.0.1:9
CUCO_LLM_BASE_URL=http://127.0.0.1:9 expect 5 "give --llm-model NAME or set CUCO_LLM_MODEL" \
	evolve gemm_allgather --operator mixed
expect 5 "--operator gpt: give builtin, llm or mixed" evolve gemm_allgather --operator gpt
expect 5 "--llm-share needs --operator mixed" evolve gemm_allgather --llm-share 0.3
expect 5 "--llm-share needs --operator mixed" evolve gemm_allgather --operator llm \
	--llm-base-url http://x --llm-model m --llm-share 0.3
expect 5 "--llm-price m: give MODEL=IN,OUT" evolve gemm_allgather --llm-price m
expect 5 "unknown option --llm-bogus" evolve gemm_allgather --llm-bogus 1
# nothing ran: no store was created
if [ -e "$TMP/cuco.db" ]; then
	echo "FAIL: a refused LLM configuration created the store"
	fail=$((fail + 1))
else
	pass=$((pass + 1))
fi
help=$("$CUCO" evolve --help)
for flag in --operator --llm-share --llm-base-url --llm-model --llm-key-env \
	--llm-budget-tokens --llm-budget-cost --llm-price --llm-timeout; do
	if [[ $help == *"$flag"* ]]; then
		pass=$((pass + 1))
	else
		echo "FAIL: cuco evolve --help does not document $flag"
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
