#!/usr/bin/env bash
# llm_real_server.sh - cuco's LLM client against a real OpenAI-compatible
# server that cuco did not write: llama.cpp's, through llama-cpp-python
# (installed by scripts/setup-llm-server.sh), serving tiny random-weight
# llama models made here in seconds (a BPE tokenizer trained with
# `tokenizers` on cuco's own docs, weights written with the `gguf` writer).
# `cuco fastpath --llm` on a host program the rules refuse drives the client
# without a GPU; the replies are noise, so every one is a rejected reply.
# Asserted: every call is stored with HTTP status 200, one attempt, usage,
# finish_reason and its own seed; max_tokens reaches the server (replies stop at "length"); the key goes out as
# a bearer token (the server checks it) and is never stored; a wrong key is a
# 401 that is not retried; a prompt larger than the context is a 400 that is
# not retried, stored with the server's words; a base URL ending in /v1
# works; a model the endpoint does not list is noted. Anthropic's Messages
# API (--llm-api anthropic): whether the server answers /v1/messages, and
# cuco's call stored either way (tests/llm_server.py covers that API).
#
#   bash tests/llm_real_server.sh <path-to-cuco>      (CUCO_HOME: the source tree)
#
# Exits 77 (skipped) when the server is not installed. Prints one line per
# failure and "N passed, N failed" last.
set -u

if [ $# -ne 1 ]; then
	echo "usage: bash tests/llm_real_server.sh <path-to-cuco>" >&2
	exit 2
fi
CUCO=$1
case $CUCO in
/*) ;;
*) CUCO=$PWD/$CUCO ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
export CUCO_HOME=${CUCO_HOME:-$(dirname "$HERE")}
if ! PY=$(bash "$CUCO_HOME/scripts/setup-llm-server.sh" --check 2>/dev/null); then
	echo "llm_real_server: skipped: llama-cpp-python is not installed" \
		"(bash scripts/setup-llm-server.sh installs it)"
	exit 77
fi
for tool in sqlite3 curl; do
	if ! command -v "$tool" >/dev/null; then
		echo "llm_real_server: skipped: $tool is not installed"
		exit 77
	fi
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuco-llm-real.XXXXXX") || exit 2
SERVER=
cleanup() {
	if [ -n "$SERVER" ]; then
		kill "$SERVER" 2>/dev/null
		wait "$SERVER" 2>/dev/null
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
export CUCO_STATE=$TMP/state
export CUCO_STORE=$TMP/default.db
unset CUCO_LLM_BASE_URL CUCO_LLM_MODEL
KEY=sk-cuco-real-$$-7f3e9a
export CUCO_REAL_KEY=$KEY
HOST=$CUCO_HOME/tests/fixtures/llm/fastpath/host.cu
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() {
	echo "FAIL: $*"
	fail=$((fail + 1))
}
# expect WHAT GOT WANT: a value equals what it should
expect() {
	if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi
}
# q DB SQL: one value from a store
q() { sqlite3 "$1" "$2"; }

# ---- the tiny models: a tokenizer trained on cuco's docs, random weights, two chat templates
t0=$(date +%s)
if ! "$PY" - "$CUCO_HOME" "$TMP" >"$TMP/model.log" 2>&1 <<'EOF'; then
import glob, json, os, sys
import numpy as np
import gguf
from tokenizers import Tokenizer, models, pre_tokenizers, decoders, trainers

src, out_dir = sys.argv[1], sys.argv[2]
texts = []
for pat in ("docs/*.md", "share/prompts/*.txt", "include/cuco/*.h"):
    for p in sorted(glob.glob(os.path.join(src, pat))):
        with open(p, encoding="utf-8", errors="replace") as f:
            texts.append(f.read())
special = ["<s>", "<|im_start|>", "<|im_end|>", "<start_of_turn>", "<end_of_turn>"]
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
tok.train_from_iterator(texts, trainers.BpeTrainer(
    vocab_size=1024, special_tokens=special, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
spec = json.loads(tok.to_str())
vocab = spec["model"]["vocab"]
merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
tokens = [None] * len(vocab)
for t, i in vocab.items():
    tokens[i] = t
types = [gguf.TokenType.CONTROL if t in special else gguf.TokenType.NORMAL for t in tokens]
templates = {
    # ChatML: takes a system message
    "tiny": ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
             "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
             "<|im_end|>"),
    # as the Gemma family's templates: the system role is refused
    "tiny-nosys": ("{% if messages[0]['role'] == 'system' %}"
                   "{{ raise_exception('System role not supported') }}{% endif %}"
                   "{% for m in messages %}<start_of_turn>{{ m['role'] }}\n{{ m['content'] }}"
                   "<end_of_turn>\n{% endfor %}"
                   "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}",
                   "<end_of_turn>"),
}
n_embd, n_layer, n_head, n_ff = 64, 2, 4, 128
rng = np.random.default_rng(1)
for name, (tmpl, eos) in templates.items():
    w = gguf.GGUFWriter(os.path.join(out_dir, name + ".gguf"), "llama")
    w.add_name(name)
    w.add_context_length(32768)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head)
    w.add_rope_dimension_count(n_embd // n_head)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(vocab["<s>"])
    w.add_eos_token_id(vocab[eos])
    w.add_add_bos_token(False)
    w.add_chat_template(tmpl)

    def t(shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    ones = np.ones(n_embd, dtype=np.float32)
    w.add_tensor("token_embd.weight", t((len(tokens), n_embd)))
    w.add_tensor("output_norm.weight", ones)
    w.add_tensor("output.weight", t((len(tokens), n_embd)))
    for i in range(n_layer):
        b = "blk.%d." % i
        for part in ("attn_q", "attn_k", "attn_v", "attn_output"):
            w.add_tensor(b + part + ".weight", t((n_embd, n_embd)))
        w.add_tensor(b + "attn_norm.weight", ones)
        w.add_tensor(b + "ffn_norm.weight", ones)
        w.add_tensor(b + "ffn_gate.weight", t((n_ff, n_embd)))
        w.add_tensor(b + "ffn_up.weight", t((n_ff, n_embd)))
        w.add_tensor(b + "ffn_down.weight", t((n_embd, n_ff)))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
print("vocab %d, merges %d" % (len(tokens), len(merges)))
EOF
	echo "FAIL: the tiny models could not be made:"
	cat "$TMP/model.log"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "llm_real_server: models made in $(($(date +%s) - t0)) s ($(tail -1 "$TMP/model.log"))"

# ---- the server: three models on one endpoint, the key checked
PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$TMP/server.json" <<EOF
{"host": "127.0.0.1", "port": $PORT, "api_key": "$KEY", "models": [
 {"model": "$TMP/tiny.gguf", "model_alias": "tiny", "n_ctx": 16384, "n_threads": 2, "seed": 7, "verbose": false},
 {"model": "$TMP/tiny-nosys.gguf", "model_alias": "tiny-nosys", "n_ctx": 32768, "n_threads": 2, "seed": 7, "verbose": false},
 {"model": "$TMP/tiny.gguf", "model_alias": "tiny-small", "n_ctx": 512, "n_threads": 2, "seed": 7, "verbose": false}
]}
EOF
"$PY" -m llama_cpp.server --config_file "$TMP/server.json" >"$TMP/server.log" 2>&1 &
SERVER=$!
BASE=http://127.0.0.1:$PORT
up=0
for _ in $(seq 1 120); do
	if curl -sf -H "Authorization: Bearer $KEY" "$BASE/v1/models" >"$TMP/models.json" 2>/dev/null; then
		up=1
		break
	fi
	kill -0 "$SERVER" 2>/dev/null || break
	sleep 0.5
done
if [ "$up" != 1 ]; then
	echo "FAIL: llama-cpp-python's server did not come up:"
	tail -20 "$TMP/server.log"
	echo "0 passed, 1 failed"
	exit 1
fi
ok
"$PY" -c 'import llama_cpp; print("llm_real_server: llama-cpp-python", llama_cpp.__version__)'

LLM=(--llm-key-env CUCO_REAL_KEY --llm-timeout 120 --llm-iterations 2)

# ---- 1. fastpath --llm against the real server: every call stored, as it went
DB=$TMP/fastpath.db
"$CUCO" fastpath --llm "$HOST" --llm-base-url "$BASE" --llm-model tiny --llm-max-tokens 24 \
	"${LLM[@]}" --store "$DB" -o "$TMP/seed.cu" >"$TMP/fp.out" 2>"$TMP/fp.err"
rc=$?
[ "$rc" -ne 0 ] && ok || bad "fastpath --llm on noise succeeded"
grep -q "stage A: no acceptable program after 2 attempts" "$TMP/fp.err" && ok ||
	bad "fastpath --llm: no 'no acceptable program' in: $(tail -3 "$TMP/fp.err")"
grep -q "does not list model" "$TMP/fp.err" && bad "fastpath --llm: a listed model was noted" || ok
expect "calls stored" "$(q "$DB" 'SELECT count(*) FROM llm_calls')" 2
expect "calls answered 200 at the first attempt" \
	"$(q "$DB" 'SELECT count(*) FROM llm_calls WHERE http_status = 200 AND attempts = 1')" 2
# the server's own count of completion tokens: seen 26 for max_tokens 24 (llama-cpp-python
# 0.3.36 counted a couple over now and then), so a margin; what matters is that it is stored
expect "usage stored" "$(q "$DB" 'SELECT count(*) FROM llm_calls WHERE tokens_in > 500 AND
	tokens_out BETWEEN 0 AND 32')" 2
expect "finish_reason stored" "$(q "$DB" "SELECT count(*) FROM llm_calls WHERE
	finish_reason IN ('length', 'stop')")" 2
expect "a seed per call" "$(q "$DB" 'SELECT count(DISTINCT sampling_seed) FROM llm_calls WHERE
	sampling_seed IS NOT NULL')" 2
expect "noise is a rejected reply" "$(q "$DB" "SELECT count(*) FROM llm_calls WHERE
	error LIKE 'fastpath stage A attempt _/2: reply rejected%' AND reply IS NOT NULL")" 2
expect "no unreadable reply" "$(q "$DB" "SELECT count(*) FROM llm_calls WHERE
	error LIKE '%not a JSON object%'")" 0
expect "the seeds went out" "$(q "$DB" 'SELECT count(*) FROM llm_calls WHERE
	sampling_seed BETWEEN 0 AND 2147483647')" 2
cnt=$(grep -c "$KEY" "$DB" "$DB-wal" 2>/dev/null | awk -F: '{s += $NF} END {print s + 0}')
expect "the key in the store file" "$cnt" 0
q "$DB" 'SELECT id, http_status, attempts, tokens_in, tokens_out, finish_reason, sampling_seed,
	round(latency_ms) FROM llm_calls' | sed 's/^/llm_real_server:   call /'

# ---- 2. the same seed and prompt twice gives the same reply; another seed another one
DB2=$TMP/again.db
"$CUCO" fastpath --llm "$HOST" --llm-base-url "$BASE/v1/" --llm-model tiny --llm-max-tokens 24 \
	"${LLM[@]}" --store "$DB2" >/dev/null 2>"$TMP/fp2.err"
expect "a base URL ending in /v1/" "$(q "$DB2" 'SELECT count(*) FROM llm_calls WHERE
	http_status = 200')" 2
expect "the same seeds in a second run" "$(q "$DB2" 'SELECT group_concat(sampling_seed) FROM llm_calls')" \
	"$(q "$DB" 'SELECT group_concat(sampling_seed) FROM llm_calls')"
# the server samples by the request's seed: the same prompt and seed, the same reply
sqlite3 "$DB2" "ATTACH '$DB' AS one; SELECT a.prompt = b.prompt, a.reply = b.reply FROM llm_calls a
	JOIN one.llm_calls b ON a.id = b.id WHERE a.id = 1" >"$TMP/same.txt"
expect "the same prompt and seed give the same reply" "$(cat "$TMP/same.txt")" "1|1"

# ---- 3. a wrong key: 401, not retried, stored with the server's answer
DB3=$TMP/key.db
CUCO_REAL_KEY=sk-wrong "$CUCO" fastpath --llm "$HOST" --llm-base-url "$BASE" --llm-model tiny \
	"${LLM[@]}" --store "$DB3" >/dev/null 2>"$TMP/fp3.err"
expect "a wrong key: 401 at the first attempt" "$(q "$DB3" "SELECT count(*) FROM llm_calls WHERE
	http_status = 401 AND attempts = 1 AND error LIKE '%check the API key in \$CUCO_REAL_KEY%'")" 2

# ---- 4. a prompt larger than the context: 400, not retried, the server's words kept
DB4=$TMP/ctx.db
"$CUCO" fastpath --llm "$HOST" --llm-base-url "$BASE" --llm-model tiny-small "${LLM[@]}" \
	--store "$DB4" >/dev/null 2>"$TMP/fp4.err"
expect "context overflow: 400 at the first attempt" "$(q "$DB4" "SELECT count(*) FROM llm_calls
	WHERE http_status = 400 AND attempts = 1 AND error LIKE '%context%'")" 2
q "$DB4" 'SELECT error FROM llm_calls LIMIT 1' | cut -c1-240 | sed 's/^/llm_real_server:   /'

# ---- 5. a model the endpoint does not list is noted before the run
"$CUCO" fastpath --llm "$HOST" --llm-base-url "$BASE" --llm-model tiny-absent --llm-iterations 1 \
	--llm-key-env CUCO_REAL_KEY --llm-max-tokens 8 --store "$TMP/absent.db" >/dev/null \
	2>"$TMP/fp5.err"
grep -q "note: the endpoint does not list model 'tiny-absent' (it lists: tiny, tiny-nosys, tiny-small)" \
	"$TMP/fp5.err" && ok || bad "no note for an unlisted model: $(head -3 "$TMP/fp5.err")"

# ---- 5b. Anthropic's Messages API: llama-cpp-python 0.3.36 has no /v1/messages route, so
# `--llm-api anthropic` gets a 404, not retried and stored with the URL hint; should a later
# version answer it, the calls must be stored as answered
code=$(curl -s -o "$TMP/messages.json" -w '%{http_code}' -X POST "$BASE/v1/messages" \
	-H "x-api-key: $KEY" -H 'anthropic-version: 2023-06-01' -H 'content-type: application/json' \
	-d '{"model":"tiny","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}')
echo "llm_real_server: POST /v1/messages answered HTTP $code: $(head -c 160 "$TMP/messages.json")"
ADB=$TMP/anthropic.db
"$CUCO" fastpath --llm "$HOST" --llm-api anthropic --llm-base-url "$BASE" --llm-model tiny \
	--llm-key-env CUCO_REAL_KEY --llm-iterations 1 --llm-max-tokens 24 --store "$ADB" \
	>/dev/null 2>"$TMP/fp6.err"
acalls=$(q "$ADB" 'SELECT count(*) FROM llm_calls')
[ "${acalls:-0}" -ge 1 ] && ok || bad "anthropic: no call stored: $(tail -3 "$TMP/fp6.err")"
if [ "$code" = 404 ]; then
	expect "anthropic: 404 at the first attempt, stored" "$(q "$ADB" "SELECT count(*) FROM
		llm_calls WHERE http_status = 404 AND attempts = 1 AND endpoint LIKE '%/v1/messages'
		AND error LIKE '%check the base URL%'")" "$acalls"
else
	expect "anthropic: answered and stored" "$(q "$ADB" "SELECT count(*) FROM llm_calls WHERE
		http_status = $code AND endpoint LIKE '%/v1/messages'")" "$acalls"
fi
cnt=$(grep -c "$KEY" "$ADB" "$ADB-wal" 2>/dev/null | awk -F: '{s += $NF} END {print s + 0}')
expect "anthropic: the key in the store file" "$cnt" 0

# ---- 6. cuco evolve --operator llm with a model whose template refuses the system role, on a
# stand-in harness and nvcc (no GPU, no CUDA): the first call is folded and answered, the
# later ones go folded; noise is rejected, never a failed call; the token budget holds.
mkdir -p "$TMP/bin"
cat >"$TMP/bin/cuco-harness" <<'HARNESS'
#!/usr/bin/env bash
# two H100-like GPUs; every program verifies, the baseline in 100 us, any other in 80 us
result= shape= progs=
while [ $# -gt 0 ]; do
	case $1 in
	--count-gpus) echo 2; exit 0 ;;
	--probe)
		echo '{"harness":1,"gpus":[{"cc":"9.0","sm_count":132},{"cc":"9.0","sm_count":132}],"gin_contexts":0,"lsa":true}'
		exit 0 ;;
	--result-file) result=$2; shift ;;
	--shape) shape=$2; shift ;;
	--program)
		name=${2%%=*} us=80
		[ "$name" = baseline ] && us=100
		progs="$progs${progs:+,}{\"name\":\"$name\",\"status\":\"ok\",\"verified\":true,\"rel_err\":1e-05,\"median_us\":$us,\"p10_us\":$us,\"p90_us\":$us,\"min_us\":$us,\"mean_us\":$us,\"host_us\":1,\"iters\":20}"
		shift ;;
	--*) [ $# -gt 1 ] && [ "${2#--}" = "$2" ] && shift ;;
	esac
	shift
done
line="{\"harness\":1,\"status\":\"ok\",\"rank\":0,\"ranks\":2,\"gpu\":\"stand-in\",\"timing\":\"sustained\",\"shape\":\"$shape\",\"programs\":[$progs]}"
if [ -n "$result" ]; then echo "$line" >>"$result"; else echo "$line"; fi
HARNESS
cat >"$TMP/bin/nvcc" <<'NVCC'
#!/usr/bin/env bash
# builds nothing: the output names the source's hash
out= src=
while [ $# -gt 0 ]; do
	case $1 in
	--version) echo "Cuda compilation tools, release 12.9, stand-in"; exit 0 ;;
	-o) out=$2; shift ;;
	*.cu) src=$1 ;;
	esac
	shift
done
[ -n "$out" ] && [ -r "$src" ] || exit 1
sha256sum <"$src" >"$out"
NVCC
chmod +x "$TMP/bin/cuco-harness" "$TMP/bin/nvcc"
EDB=$TMP/evolve.db
BUDGET=60000
CUCO_HARNESS=$TMP/bin/cuco-harness CUCO_NVCC=$TMP/bin/nvcc "$CUCO" evolve gemm_allgather \
	--shape 2048 --generations 1 --islands 1 --children 2 --launcher env --no-recheck \
	--operator llm --llm-base-url "$BASE" --llm-model tiny-nosys --llm-key-env CUCO_REAL_KEY \
	--llm-timeout 300 --llm-max-tokens 24 --llm-budget-tokens $BUDGET --store "$EDB" \
	>"$TMP/ev.out" 2>"$TMP/ev.err"
rc=$?
calls=$(q "$EDB" 'SELECT count(*) FROM llm_calls')
[ "${calls:-0}" -ge 1 ] && ok || bad "evolve: no call stored (exit $rc): $(tail -3 "$TMP/ev.err")"
expect "evolve: the refused system role folded at once" "$(q "$EDB" "SELECT attempts || ' ' ||
	http_status FROM llm_calls ORDER BY id LIMIT 1")" "2 200"
expect "evolve: later calls folded from the start" "$(q "$EDB" 'SELECT count(*) FROM llm_calls
	WHERE id > (SELECT min(id) FROM llm_calls) AND attempts = 1 AND http_status = 200')" \
	$((${calls:-0} - 1))
expect "evolve: no system message stored" "$(q "$EDB" "SELECT count(*) FROM llm_calls WHERE
	prompt LIKE '%\"role\":\"system\"%'")" 0
expect "evolve: noise is rejected, not a failed call" "$(q "$EDB" "SELECT count(*) FROM llm_calls
	WHERE error LIKE '%reply for % rejected%' AND finish_reason IS NOT NULL")" "$calls"
expect "evolve: a seed per call" "$(q "$EDB" 'SELECT count(DISTINCT sampling_seed) FROM llm_calls')" \
	"$calls"
used=$(q "$EDB" 'SELECT sum(tokens_in + tokens_out) FROM llm_calls')
[ "${used:-0}" -le $BUDGET ] && ok || bad "evolve: $used tokens used of a budget of $BUDGET"
grep -q "budget" "$TMP/ev.out" "$TMP/ev.err" && ok || bad "evolve: the budget did not stop the run"
q "$EDB" 'SELECT id, http_status, attempts, tokens_in, tokens_out, finish_reason, sampling_seed,
	round(latency_ms) FROM llm_calls' | sed 's/^/llm_real_server:   evolve call /'
echo "llm_real_server: evolve used $used of $BUDGET tokens in $calls calls; prompt bytes a" \
	"token: $(q "$EDB" 'SELECT round(1.0 * sum(length(prompt)) / sum(tokens_in), 2) FROM llm_calls')"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
