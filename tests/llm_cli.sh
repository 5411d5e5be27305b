#!/usr/bin/env bash
# llm_cli.sh - scenario test of `cuco evolve`'s LLM flags without a model
# server: an LLM operator without an endpoint or model is refused (exit 5)
# before anything runs, naming the flag and the variable to set; flag misuse
# is a usage error; --resume reloads the stored operator settings (and which
# flags may differ); a model the endpoint does not list is noted and
# --llm-max-tokens reaches the request (tests/llm_server.py); --llm-api
# anthropic posts to /v1/messages with the key from ANTHROPIC_API_KEY as
# x-api-key; --help documents the flags.
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
expect 5 "--llm-max-tokens" evolve gemm_allgather --operator llm --llm-max-tokens 0
expect 5 "--llm-max-tokens" fastpath --llm gemm_allgather --llm-max-tokens many
expect 5 "--llm-api claude: give openai or anthropic" fastpath --llm gemm_allgather \
	--llm-api claude
expect 5 "--llm-api claude: give openai or anthropic" evolve gemm_allgather --operator llm \
	--llm-api claude
expect 5 "--llm-diagnose needs --operator llm or mixed" evolve gemm_allgather --llm-diagnose
# nothing ran: no store was created
if [ -e "$TMP/cuco.db" ]; then
	echo "FAIL: a refused LLM configuration created the store"
	fail=$((fail + 1))
else
	pass=$((pass + 1))
fi
# --resume takes the operator and its settings from the stored run config: no
# --llm-* flag is needed (nor read from the environment); --operator,
# --llm-share and --llm-model must match; budgets and the like replace the
# stored value with a note. The runs have no stored seed, so a resume that
# passes the checks stops right after them with "has no stored seed". A
# stand-in harness finds two GPUs, which a resume needs before it runs.
if command -v sqlite3 >/dev/null 2>&1; then
	export CUCO_STORE=$TMP/resume.db
	CUCO_HARNESS=$(cd "$(dirname "$0")" && pwd)/fixtures/cli/cuco-harness
	export CUCO_HARNESS
	"$CUCO" evolve --resume 1 >/dev/null 2>&1 # makes the store; it has no run 1
	llm='"llm":{"base_url":"http://127.0.0.1:9","models":["model-a","model-b"],'
	llm+='"key_env":"CUCO_TEST_NO_KEY","budget_tokens":3000,"timeout_ms":300000}'
	for cfg in "{\"search_seed\":1,\"operator\":\"llm\",\"llm_share\":1,$llm}" \
		'{"search_seed":1,"operator":"builtin","llm_share":0}' \
		"{\"search_seed\":1,\"operator\":\"mixed\",\"llm_share\":0.5,$llm}" \
		'{"search_seed":1,"operator":"llm","llm_share":1,"llm":{"models":[]}}' \
		'{"search_seed":1}'; do
		sqlite3 "$CUCO_STORE" "INSERT INTO runs(created_at, kind, workload, shape, config) \
			VALUES ('2026-01-01T00:00:00.000Z', 'evolve', 'gemm_allgather', '2048', '$cfg')"
	done
	expect 14 "run 1 has no stored seed" evolve --resume 1 --no-recheck
	CUCO_LLM_MODEL=model-z CUCO_LLM_BASE_URL=http://x expect 14 "run 1 has no stored seed" \
		evolve --resume 1
	expect 5 "--llm-model model-a --llm-model model-c: run 1 was made with --llm-model \
model-a --llm-model model-b, which a resumed run keeps" evolve --resume 1 --llm-model model-a \
		--llm-model model-c
	expect 14 "run 1 has no stored seed" evolve --resume 1 --llm-model model-a \
		--llm-model model-b
	expect 5 "--operator mixed: run 1 was made with --operator llm, which a resumed run keeps" \
		evolve --resume 1 --operator mixed
	expect 5 "--llm-share 0.3: run 1 was made with --operator llm, which takes no share" \
		evolve --resume 1 --llm-share 0.3
	expect 5 "--operator llm: run 2 was made with --operator builtin" evolve --resume 2 \
		--operator llm
	expect 5 "--llm-share 0.3: run 3 was made with --llm-share 0.5" evolve --resume 3 \
		--llm-share 0.3
	expect 14 "--llm-budget-tokens 5000 replaces the stored 3000 for this resume" \
		evolve --resume 1 --llm-budget-tokens 5000
	expect 14 "--llm-timeout 20 replaces the stored 300 s for this resume" \
		evolve --resume 3 --llm-timeout 20
	expect 14 "--llm-api anthropic replaces the stored openai for this resume" \
		evolve --resume 1 --llm-api anthropic
	expect 14 "--llm-diagnose on replaces the stored off for this resume" \
		evolve --resume 1 --llm-diagnose
	expect 4 "run config: llm.models: not an array of 1 to 8 names" evolve --resume 4
	expect 14 "run 5 has no stored seed" evolve --resume 5
	export CUCO_STORE=$TMP/cuco.db
	unset CUCO_HARNESS
else
	echo "FAIL: the sqlite3 command is not installed (scripts/setup-deps.sh --test installs it)"
	fail=$((fail + 1))
fi
# a model the endpoint does not list is noted before the run (tests/llm_server.py lists two);
# --llm-max-tokens goes into the request
HERE=$(cd "$(dirname "$0")" && pwd)
python3 "$HERE/llm_server.py" --fixtures "$HERE/fixtures/llm/evolve" --log "$TMP/requests.jsonl" \
	--lifetime 30 --models=model-a,model-b truncated >"$TMP/server.out" 2>&1 &
server=$!
for _ in $(seq 1 100); do
	grep -q '^PORT ' "$TMP/server.out" 2>/dev/null && break
	sleep 0.1
done
port=$(sed -n 's/^PORT //p' "$TMP/server.out")
out=$("$CUCO" fastpath --llm "$HERE/fixtures/llm/fastpath/host.cu" --llm-base-url \
	"http://127.0.0.1:$port" --llm-model model-z --llm-iterations 1 --llm-max-tokens 77 \
	--store "$TMP/note.db" 2>&1 >/dev/null)
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
if [[ $out == *"note: the endpoint does not list model 'model-z' (it lists: model-a, model-b)"* ]]; then
	pass=$((pass + 1))
else
	echo "FAIL: no note for a model the endpoint does not list: $out"
	fail=$((fail + 1))
fi
if grep -q '"max_tokens": 77' "$TMP/requests.jsonl" 2>/dev/null; then
	pass=$((pass + 1))
else
	echo "FAIL: --llm-max-tokens 77 is not in the request: $(cat "$TMP/requests.jsonl" 2>/dev/null)"
	fail=$((fail + 1))
fi
# --llm-api anthropic: the Messages API's path and headers, the key from ANTHROPIC_API_KEY
python3 "$HERE/llm_server.py" --fixtures "$HERE/fixtures/llm/evolve" --log "$TMP/anthropic.jsonl" \
	--lifetime 30 truncated >"$TMP/server2.out" 2>&1 &
server=$!
for _ in $(seq 1 100); do
	grep -q '^PORT ' "$TMP/server2.out" 2>/dev/null && break
	sleep 0.1
done
port=$(sed -n 's/^PORT //p' "$TMP/server2.out")
ANTHROPIC_API_KEY=sk-ant-cli-test OPENAI_API_KEY=sk-not-this "$CUCO" fastpath --llm \
	"$HERE/fixtures/llm/fastpath/host.cu" --llm-api anthropic --llm-base-url \
	"http://127.0.0.1:$port" --llm-model claude-test --llm-iterations 1 --llm-max-tokens 55 \
	--store "$TMP/anthropic.db" >/dev/null 2>&1
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
req=$(grep '"/v1/messages"' "$TMP/anthropic.jsonl" 2>/dev/null | head -1)
if [[ $req == *'"x_api_key": "sk-ant-cli-test"'* && $req == *'"authorization": ""'* &&
	$req == *'"anthropic_version": "2023-06-01"'* && $req == *'"max_tokens": 55'* &&
	$req != *'"seed"'* ]]; then
	pass=$((pass + 1))
else
	echo "FAIL: --llm-api anthropic: not the Messages API's request: $(cat "$TMP/anthropic.jsonl")"
	fail=$((fail + 1))
fi
if command -v sqlite3 >/dev/null 2>&1 && [ "$(sqlite3 "$TMP/anthropic.db" \
	"SELECT count(*) FROM llm_calls WHERE endpoint LIKE '%/v1/messages' AND sampling_seed IS NOT NULL \
	AND finish_reason = 'length' AND prompt NOT LIKE '%sk-ant-cli-test%'")" -ge 1 ]; then
	pass=$((pass + 1))
else
	echo "FAIL: --llm-api anthropic: the call is not stored as expected"
	fail=$((fail + 1))
fi
# the API key never leaves: planted in the environment and echoed by the server (in a reply and
# in an error), it is in no stored text and not on stderr
key=sk-cuco-planted-5e4d3c2b1a
python3 "$HERE/llm_server.py" --fixtures "$HERE/fixtures/llm" --log "$TMP/key-requests.jsonl" \
	--lifetime 30 echo_key_reply echo_key_401 echo_key_401 echo_key_401 echo_key_401 \
	echo_key_401 >"$TMP/key-server.out" 2>&1 &
server=$!
for _ in $(seq 1 100); do
	grep -q '^PORT ' "$TMP/key-server.out" 2>/dev/null && break
	sleep 0.1
done
port=$(sed -n 's/^PORT //p' "$TMP/key-server.out")
CUCO_TEST_PLANTED_KEY=$key "$CUCO" fastpath --llm "$HERE/fixtures/llm/fastpath/host.cu" \
	--llm-base-url "http://127.0.0.1:$port" --llm-model m --llm-key-env CUCO_TEST_PLANTED_KEY \
	--llm-iterations 2 --store "$TMP/key.db" >"$TMP/key.out" 2>"$TMP/key.err"
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
if ! grep -q "Bearer $key" "$TMP/key-requests.jsonl" 2>/dev/null; then
	echo "FAIL: the planted key did not reach the server: $(cat "$TMP/key.err")"
	fail=$((fail + 1))
elif grep -aq "$key" "$TMP"/key.db* "$TMP/key.out" "$TMP/key.err"; then
	echo "FAIL: the API key is in the store or on stderr: $(grep -al "$key" "$TMP"/key.*)"
	fail=$((fail + 1))
elif [ "$(sqlite3 "$TMP/key.db" "SELECT count(*) FROM llm_calls WHERE error LIKE '%[REDACTED]%' \
	OR reply LIKE '%[REDACTED]%'")" = 0 ]; then
	echo "FAIL: no stored call kept the echoed key's place: $(sqlite3 "$TMP/key.db" \
		'SELECT error FROM llm_calls')"
	fail=$((fail + 1))
else
	pass=$((pass + 1))
fi
expect 5 "--llm-base-url (or CUCO_LLM_BASE_URL) holds credentials" evolve gemm_allgather \
	--operator llm --llm-base-url "http://user:$key@127.0.0.1:9/v1" --llm-model m
out=$("$CUCO" evolve gemm_allgather --operator llm --llm-base-url "http://u:$key@h/v1" \
	--llm-model m 2>&1)
if [[ $out == *"$key"* ]]; then
	echo "FAIL: a refused --llm-base-url printed its credentials: $out"
	fail=$((fail + 1))
else
	pass=$((pass + 1))
fi
help=$("$CUCO" evolve --help)
if [[ $help == *"--llm-model must equal the stored values"* ]]; then
	pass=$((pass + 1))
else
	echo "FAIL: cuco evolve --help does not say how --resume treats the LLM flags"
	fail=$((fail + 1))
fi
for flag in --operator --llm-share --llm-diagnose --llm-api --llm-base-url --llm-model --llm-key-env \
	--llm-budget-tokens --llm-budget-cost --llm-price --llm-timeout --llm-max-tokens; do
	if [[ $help == *"$flag"* ]]; then
		pass=$((pass + 1))
	else
		echo "FAIL: cuco evolve --help does not document $flag"
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
