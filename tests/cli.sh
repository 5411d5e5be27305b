#!/usr/bin/env bash
# cli.sh - scenario test of the `cuco` command on a machine without GPUs:
# exit codes and one-line reasons for misuse, doctor, workloads, fastpath,
# bench (compile-only, then refused for lack of GPUs), show (and --json), a
# failed run's reason in show and report, and a store
# written by a newer cuco.
#
#   bash tests/cli.sh <path-to-cuco>      (CUCO_HOME: the source tree)
#
# Needs nvcc (one compile-only bench, ~7 programs) and the sqlite3 CLI.
# Prints one line per failure and "N passed, N failed" last; exits 1 on any
# failure.
set -u

if [ $# -ne 1 ]; then
	echo "usage: bash tests/cli.sh <path-to-cuco>" >&2
	exit 2
fi
CUCO=$1
case $CUCO in
/*) ;;
*) CUCO=$PWD/$CUCO ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/fixtures/cli
export CUCO_HOME=${CUCO_HOME:-$(dirname "$HERE")}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuco-cli.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
# Everything the commands keep (compile cache, default store) stays in TMP.
export CUCO_STATE=$TMP/state
export CUCO_STORE=$TMP/default.db
cd "$TMP" || exit 2

. "$HERE/lib/check.sh"

# usage NAME TEXT -- CMD...: a usage error: exit 5, nothing on stdout, and
# the first line of stderr is cuco's reason, containing TEXT.
usage() {
	local name=$1 text=$2 first
	shift 3
	run "$@"
	first=$(printf '%s\n' "$err" | head -n 1)
	if [ "$rc" -ne 5 ]; then
		failed "$name" "exit status $rc, expected 5"
	elif [ -n "$out" ]; then
		failed "$name" "a usage error printed to stdout"
	else
		case $first in
		cuco*"$text"*) pass=$((pass + 1)) ;;
		*) failed "$name" "first line of stderr is not 'cuco...$text...'" ;;
		esac
	fi
}

# ---- misuse ---------------------------------------------------------------

run "$CUCO"
if [ "$rc" -eq 5 ] && [ -z "$out" ] && printf '%s\n' "$err" | grep -q '^usage: cuco <command>'; then
	pass=$((pass + 1))
else
	failed "no arguments" "expected exit 5 and the usage on stderr"
fi
usage "unknown command" "'frobnicate' is not a cuco command" -- "$CUCO" frobnicate
check "cuco --help" 0 "usage: cuco <command>" "bench" -- "$CUCO" --help
check "cuco --version" 0 "cuco " -- "$CUCO" --version

for cmd in doctor workloads fastpath eval bench show; do
	check "$cmd --help" 0 "usage: cuco $cmd" -- "$CUCO" "$cmd" --help
	[ -z "$err" ] || failed "$cmd --help" "--help wrote to stderr"
	usage "$cmd --bogus" "--bogus" -- "$CUCO" "$cmd" --bogus
done

# Bad values: the message names the flag and the value.
usage "bench --iters x" "--iters x" -- "$CUCO" bench gemm_allgather --iters x
# getopt_long's --flag=value is the same flag as --flag value
usage "bench --iters=x" "--iters x" -- "$CUCO" bench gemm_allgather --iters=x
usage "bench --shape=nosuch" "--shape nosuch" -- "$CUCO" bench gemm_allgather --shape=nosuch
check "help bench (= bench --help)" 0 "usage: cuco bench" -- "$CUCO" help bench
usage "help nosuch" "'nosuch' is not a cuco command" -- "$CUCO" help nosuch
usage "bench --ranks 0" "--ranks 0" -- "$CUCO" bench gemm_allgather --ranks 0
# a --program file named like a workload program (or the seed) would take its result
mkdir -p "$TMP/other"
for f in baseline seed a=b.cu x.cu other/x.cu; do printf 'int x;\n' >"$TMP/$f"; done
check "bench --program named baseline" 5 "the name baseline is taken by the workload's program" \
	-- "$CUCO" bench gemm_allgather --program "$TMP/baseline" --compile-only
check "bench --program named seed" 5 "the name seed is taken by the workload's program" \
	-- "$CUCO" bench gemm_allgather --program "$TMP/seed" --compile-only
check "bench --program named twice" 5 "the name x.cu is taken by another --program" \
	-- "$CUCO" bench gemm_allgather --program "$TMP/x.cu" --program "$TMP/other/x.cu" --compile-only
check "bench --program with = in its name" 5 "may not hold '=' or ','" -- "$CUCO" bench \
	gemm_allgather --program "$TMP/a=b.cu" --compile-only
usage "bench --timeout -1" "--timeout -1" -- "$CUCO" bench gemm_allgather --timeout -1
usage "bench --input-seed -5" "--input-seed -5" -- "$CUCO" bench gemm_allgather --input-seed -5
usage "bench --seed (which seed?)" "--seed names no seed: --input-seed N" -- "$CUCO" bench gemm_allgather --seed 3
usage "evolve --seed (which seed?)" "--input-seed N (the workload's inputs) or --search-seed N" -- "$CUCO" evolve gemm_allgather --seed 3
usage "eval --warmup many" "--warmup many" -- "$CUCO" eval x.cu --workload gemm_allgather --warmup many
usage "fastpath --comm-ctas 0" "--comm-ctas 0" -- "$CUCO" fastpath gemm_allgather --comm-ctas 0
usage "bench --store (no value)" "--store needs a value" -- "$CUCO" bench gemm_allgather --store
usage "bench --shape nosuch" "--shape nosuch" -- "$CUCO" bench gemm_allgather --shape nosuch
usage "bench two workloads" "unexpected argument" -- "$CUCO" bench gemm_allgather other
set -- $(for i in 1 2 3 4 5 6 7 8 9 10 11; do printf -- '--program x%d.cu ' "$i"; done)
usage "bench too many --program" "11 --program files do not fit" -- "$CUCO" bench gemm_allgather "$@"
set --
usage "show run abc" "run abc" -- "$CUCO" show run abc
usage "show run (no id)" "run needs an ID" -- "$CUCO" show run
usage "show (nothing)" "show what?" -- "$CUCO" show
usage "eval (no program)" "which program?" -- "$CUCO" eval
usage "fastpath (no input)" "which workload or host program?" -- "$CUCO" fastpath
usage "workloads extra" "unexpected argument extra" -- "$CUCO" workloads extra
usage "doctor extra" "unexpected argument extra" -- "$CUCO" doctor extra
usage "bench without workload" "which workload?" -- "$CUCO" bench
usage "bench --timing bogus" "--timing bogus: expected sustained or burst" -- \
	"$CUCO" bench gemm_allgather --timing bogus
usage "evolve --timing (no value)" "--timing" -- "$CUCO" evolve gemm_allgather --timing
check "bench nosuch" nonzero 'no workload "nosuch"' "cuco workloads" -- "$CUCO" bench nosuch
expect "bench nosuch: one line" "$(printf '%s\n' "$err" | wc -l)" -eq 1

# ---- a malformed manifest: file:line:column: field: what -----------------

BROKEN="broken/manifest.json:6:16: tolerance: expected a number"
check "bench <malformed manifest>" nonzero "$BROKEN" -- "$CUCO" bench "$FIX/broken/manifest.json"
check "fastpath <malformed manifest>" nonzero "$BROKEN" -- \
	"$CUCO" fastpath "$FIX/broken/manifest.json" --no-compile -o "$TMP/never.cu"
expect "fastpath <malformed manifest>: no output" ! -e "$TMP/never.cu"
# `cuco workloads` reports a broken package and still lists the good ones.
mkdir -p "$TMP/home/workloads"
for d in include device share; do
	ln -s "$CUCO_HOME/$d" "$TMP/home/$d"
done
ln -s "$CUCO_HOME/workloads/gemm_allgather" "$TMP/home/workloads/gemm_allgather"
cp -R "$FIX/broken" "$TMP/home/workloads/broken"
check "workloads <malformed manifest>" nonzero "workloads/$BROKEN" "gemm_allgather: " -- \
	env CUCO_HOME="$TMP/home" "$CUCO" workloads

# ---- doctor, workloads, fastpath -----------------------------------------

check "doctor without GPUs" 0 "no CUDA GPU" "CUDA_DEVICE_MAX_CONNECTIONS unset" -- \
	env -u CUDA_DEVICE_MAX_CONNECTIONS "$CUCO" doctor
check "doctor says how candidates are isolated" 0 "environment:    an allow-list" \
	"directory:      a private one" "network:        compiles: " -- "$CUCO" doctor
check "doctor names the harness's network namespace" 0 \
	"harness runs on this node: " -- env CUCO_SANDBOX_RUN_NETNS=1 "$CUCO" doctor
check "doctor names the hardware queues" 0 "queues:     CUDA_DEVICE_MAX_CONNECTIONS=32" -- \
	env CUDA_DEVICE_MAX_CONNECTIONS=32 "$CUCO" doctor
check "workloads" 0 -- "$CUCO" workloads
# --json: one array of the packages' manifests, each with its folder
"$CUCO" workloads --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
names = [w["name"] for w in d]
assert "gemm_allgather" in names and all(w["dir"].endswith("/" + w["name"]) for w in d), names
' && pass=$((pass + 1)) || failed "workloads --json" "not an array of manifests with their folders"
check "workloads lists the shape rules" 0 "shape rules (any other shape: --shape MxNxK):" \
	"N/ranks (N divides by the rank count) >= 64, multiple of 8" -- "$CUCO" workloads
if printf '%s\n' "$out" | grep -q '^gemm_allgather: '; then
	pass=$((pass + 1))
else
	failed "workloads" "gemm_allgather is not listed"
fi

if check "fastpath gemm_allgather" 0 "seed written to $TMP/seed.cu" -- \
	"$CUCO" fastpath gemm_allgather -o "$TMP/seed.cu" --no-compile; then
	case $(head -n 1 "$TMP/seed.cu" 2>/dev/null) in
	"// cuco-directive: {"*) pass=$((pass + 1)) ;;
	*) failed "fastpath gemm_allgather" "$TMP/seed.cu does not begin with the directive" ;;
	esac
fi
check "fastpath without collectives" nonzero "nothing to transform" "no_collectives.cu" -- \
	"$CUCO" fastpath "$FIX/no_collectives.cu" --no-compile -o "$TMP/none.cu"
expect "fastpath without collectives: no output" ! -e "$TMP/none.cu"

# ---- bench: compile here, refuse to execute without GPUs -----------------

DB=$TMP/db
check "bench --compile-only" 0 "compile stage done for gemm_allgather" "compile seed" -- \
	"$CUCO" bench gemm_allgather --shape 2048 --compile-only --store "$DB"
if printf '%s\n' "$err" | grep -q 'FAILED\|rejected'; then
	failed "bench --compile-only" "a program did not compile"
fi
check "bench without GPUs" 15 "execution needs 2 CUDA GPUs" "ok (cached)" -- \
	"$CUCO" bench gemm_allgather --shape 2048 --store "$DB"
if printf '%s\n' "$err" | grep 'compile ' | grep -qv 'ok (cached)'; then
	failed "bench without GPUs" "a program was compiled again instead of taken from the cache"
fi
# rank counts: the manifest's, or 1 for bench and eval (one GPU, nothing sent)
# (refused before the store has a run: none is left "running")
RDB=$TMP/ranks.db
check "bench on 3 ranks" 13 "gemm_allgather/manifest.json: ranks: workload gemm_allgather runs on 2, 4 or 8 ranks, not 3 (or on 1" -- \
	"$CUCO" bench gemm_allgather --ranks 3 --shape 2048 --compile-only --store "$RDB"
check "bench on 1 rank" 0 "compile stage done for gemm_allgather" -- \
	"$CUCO" bench gemm_allgather --ranks 1 --shape ragged --compile-only --no-seed --store "$RDB"
check "evolve on 3 ranks" 13 "ranks: workload gemm_allgather runs on 2, 4 or 8 ranks, not 3 (or on 1" -- \
	"$CUCO" evolve gemm_allgather --ranks 3 --shape 2048 --budget-evals 4 --store "$RDB"
check "evolve on 1 rank: taken, then refused without a GPU" 15 "execution needs 1 CUDA GPUs" -- \
	"$CUCO" evolve gemm_allgather --ranks 1 --shape 2048 --budget-evals 4 --store "$RDB"
# a shape the programs cannot take on that many ranks: refused before anything
# compiles, naming the manifest's line and the rule (a copy of gemm_allgather
# with a 200-column shape: 100 columns a rank on 2, not a multiple of 8)
mkdir -p "$TMP/rules/workloads"
for d in include device share; do
	ln -s "$CUCO_HOME/$d" "$TMP/rules/$d"
done
cp -R "$CUCO_HOME/workloads/gemm_allgather" "$TMP/rules/workloads/gemm_allgather"
sed -i 's/^    {"name": "2048", "M": 2048, "N": 2048, "K": 2048},$/&\n    {"name": "narrow", "M": 128, "N": 200, "K": 64},/' \
	"$TMP/rules/workloads/gemm_allgather/manifest.json"
check "bench: a shape against the shape rules" 4 \
	"manifest.json:11:39: shapes[1].N: shape narrow: N = 200 on 2 ranks: each rank's 100 is not a multiple of 8 (shape_rules[0], line" -- \
	env CUCO_HOME="$TMP/rules" "$CUCO" bench gemm_allgather --shape narrow --compile-only --store "$RDB"
expect "bench: refused before compiling" "$(printf '%s\n' "$err" | grep -c 'compile ')" -eq 0
check "evolve: a shape against the shape rules" 4 "shapes[1].N: shape narrow: N = 200 on 4 ranks" -- \
	env CUCO_HOME="$TMP/rules" "$CUCO" evolve gemm_allgather --ranks 4 --shape narrow --budget-evals 4 --store "$RDB"
# a shape given by its values instead of a manifest name: checked the same way,
# stored under its values joined by 'x', and resumed by that name
usage "bench: a shape by its values, K missing" "--shape M=256,N=1024: K is not given" -- \
	"$CUCO" bench gemm_allgather --shape M=256,N=1024 --compile-only
check "bench: a shape by its values against the rules" 4 \
	"shape 128x200x64: N = 200 on 2 ranks: each rank's 100 is not a multiple of 8" -- \
	"$CUCO" bench gemm_allgather --shape M=128,N=200,K=64 --compile-only --store "$RDB"
usage "bench: a shape twice, by name and by its values" "--shape 2048x2048x2048: shape 2048 is given twice" -- \
	"$CUCO" bench gemm_allgather --shape 2048 --shape 2048x2048x2048 --compile-only
check "bench: a shape by its values" 0 "compile stage done for gemm_allgather" -- \
	"$CUCO" bench gemm_allgather --shape M=256,N=1040,K=520 --compile-only --no-seed --store "$RDB"
# evolve on a node without the GPUs its ranks need is refused before the store has a run
# (as bench is). The evolve runs below that need a stored run take a stand-in harness whose
# probe finds two GPUs and whose count then finds none: each run is stored and fails at its
# first batch (tests/fixtures/cli/cuco-harness).
STANDIN=$FIX/cuco-harness
check "evolve without GPUs: refused" 15 "execution needs 2 CUDA GPUs on this node" \
	"nothing was stored" -- "$CUCO" evolve gemm_allgather --shape 2048 --budget-evals 4 \
	--store "$TMP/nogpu.db"
expect "evolve without GPUs: no run stored" "$(sqlite3 "$TMP/nogpu.db" 'SELECT count(*) FROM runs')" -eq 0
SDB=$TMP/spec.db
check "evolve: a shape by its values" 15 "execution needs 2 CUDA GPUs" -- \
	env CUCO_HARNESS="$STANDIN" "$CUCO" evolve gemm_allgather --shape M=2048,N=2048,K=4096 --budget-evals 4 --store "$SDB"
expect "evolve: stored under its values" "$(sqlite3 "$SDB" 'SELECT shape FROM runs')" = 2048x2048x4096
check "evolve --resume: the same shape by its other form" 15 "execution needs 2 CUDA GPUs" -- \
	env CUCO_HARNESS="$STANDIN" "$CUCO" evolve --resume 1 --shape 2048x2048x4096 --store "$SDB"
expect "refusals left no run" "$(sqlite3 "$RDB" 'SELECT count(*) FROM runs')" -eq 2
# an evolve run stores its timing; resuming it with another one is refused
EDB=$TMP/evolve.db
check "evolve without GPUs" 15 "execution needs 2 CUDA GPUs" "--resume 1" -- \
	env CUCO_HARNESS="$STANDIN" "$CUCO" evolve gemm_allgather --shape 2048 --budget-evals 4 --store "$EDB"
usage "evolve --resume --timing burst" "run 1 times candidates sustained" -- \
	"$CUCO" evolve --resume 1 --timing burst --store "$EDB"
check "evolve --resume without GPUs: refused" 15 "nothing was stored" -- \
	"$CUCO" evolve --resume 1 --store "$EDB"
expect "evolve --resume without GPUs: the run untouched" \
	"$(sqlite3 "$EDB" "SELECT count(*) || ' ' || status FROM runs GROUP BY status")" = "1 failed"
# a report of that run (it evaluated nothing) lands in the state directory by default
check "report into the state directory" 0 "$CUCO_STATE/reports/run-1.html" -- \
	"$CUCO" report 1 --store "$EDB"
expect "report written" -s "$CUCO_STATE/reports/run-1.md"
# several shapes: up to 4 distinct ones of the manifest, kept on resume
usage "evolve --resume --shape other" "run 1 evolves for shapes 2048; --shape 4096 would change" -- \
	"$CUCO" evolve --resume 1 --shape 4096 --store "$EDB"
usage "evolve --explore out of range" "--explore 1.5: expected a number in [0, 1]" -- \
	"$CUCO" evolve gemm_allgather --explore 1.5 --store "$EDB"
check "evolve --explore without GPUs" 15 "execution needs 2 CUDA GPUs" -- \
	env CUCO_HARNESS="$STANDIN" "$CUCO" evolve gemm_allgather --shape 2048 --budget-evals 4 --explore 0.25 --store "$TMP/explore.db"
expect "evolve --explore stored" "$(sqlite3 "$TMP/explore.db" 'SELECT config FROM runs WHERE id = 1' |
	grep -c '"explore_fraction":0.25')" -eq 1
usage "evolve --resume --explore other" "--explore 0.5: run 1 explores 0.25 of its generations" -- \
	"$CUCO" evolve --resume 1 --explore 0.5 --store "$TMP/explore.db"
# the statistic a run ranks by: checked, stored when mean, kept on resume
usage "evolve --statistic unknown" "--statistic p99: expected median or mean" -- \
	"$CUCO" evolve gemm_allgather --statistic p99 --store "$TMP/stat.db"
check "evolve --statistic mean without GPUs" 15 "execution needs 2 CUDA GPUs" -- \
	env CUCO_HARNESS="$STANDIN" "$CUCO" evolve gemm_allgather --shape 2048 --budget-evals 4 --statistic mean --store "$TMP/stat.db"
expect "evolve --statistic mean stored" "$(sqlite3 "$TMP/stat.db" 'SELECT config FROM runs WHERE id = 1' |
	grep -c '"statistic":"mean"')" -eq 1
usage "evolve --resume --statistic other" "--statistic median: run 1 ranks by the mean" -- \
	"$CUCO" evolve --resume 1 --statistic median --store "$TMP/stat.db"
# the re-check of that run: nothing correct to check, said so; misuse refused
usage "recheck without a run" "which run?" -- "$CUCO" recheck --store "$TMP/stat.db"
check "recheck of a run with nothing correct" 0 "run 1 has no correct program to re-check" -- \
	"$CUCO" recheck 1 --store "$TMP/stat.db"
check "recheck of a missing run" 14 "has no run 7" -- "$CUCO" recheck 7 --store "$TMP/stat.db"
check "recheck --json of a run with nothing correct" 0 '"rechecked": false' -- \
	"$CUCO" recheck 1 --json --store "$TMP/stat.db"
expect "recheck --json is one JSON object" "$(printf '%s' "$out" |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["run"])')" -eq 1
check "report names the statistic" 0 "$TMP/stat-report/run-1.html" -- \
	"$CUCO" report 1 --store "$TMP/stat.db" -o "$TMP/stat-report"
expect "report: mean latency" "$(grep -c '^- latency: mean of the timed runs' "$TMP/stat-report/run-1.md")" -eq 1
# the hardware queues (CUDA_DEVICE_MAX_CONNECTIONS): stored with the run; a resume with others says so
check "evolve with CUDA_DEVICE_MAX_CONNECTIONS" 15 "execution needs 2 CUDA GPUs" -- \
	env CUDA_DEVICE_MAX_CONNECTIONS=32 CUCO_HARNESS="$STANDIN" "$CUCO" evolve gemm_allgather --shape 2048 --budget-evals 4 \
	--store "$TMP/queues.db"
expect "evolve stores CUDA_DEVICE_MAX_CONNECTIONS" "$(sqlite3 "$TMP/queues.db" 'SELECT config FROM runs WHERE id = 1' |
	grep -c '"cuda_device_max_connections":"32"')" -eq 1
check "evolve --resume with other hardware queues" 15 \
	"run 1 started with CUDA_DEVICE_MAX_CONNECTIONS 32, this process has unset" -- \
	env -u CUDA_DEVICE_MAX_CONNECTIONS CUCO_HARNESS="$STANDIN" "$CUCO" evolve --resume 1 --store "$TMP/queues.db"
usage "evolve --shape twice" "--shape 2048: given twice" -- \
	"$CUCO" evolve gemm_allgather --shape 2048 --shape 4096 --shape 2048 --store "$EDB"
usage "evolve five shapes" "--shape tall: at most 4 shapes per run" -- \
	"$CUCO" evolve gemm_allgather --shape 2048 --shape 4096 --shape 8192 --shape 16384 \
	--shape tall --store "$EDB"
usage "evolve unknown shape" "--shape 999: workload gemm_allgather has no such shape (2048, 4096," -- \
	"$CUCO" evolve gemm_allgather --shape 2048 --shape 999 --store "$EDB"
check "evolve two shapes without GPUs" 15 "gemm_allgather at shapes 2048, 4096 (fitness: geometric mean" \
	"--resume 2" -- env CUCO_HARNESS="$STANDIN" "$CUCO" evolve gemm_allgather --shape 2048 --shape 4096 --budget-evals 4 \
	--store "$EDB"
check "evolve --resume keeps the shapes" 15 "gemm_allgather at shapes 2048, 4096" -- \
	env CUCO_HARNESS="$STANDIN" "$CUCO" evolve --resume 2 --store "$EDB"
check "evolve --resume with the same shapes" 15 "gemm_allgather at shapes 2048, 4096" -- \
	env CUCO_HARNESS="$STANDIN" "$CUCO" evolve --resume 2 --shape 2048 --shape 4096 --store "$EDB"
usage "evolve --resume --shape fewer" "run 2 evolves for shapes 2048, 4096; --shape 2048 would" -- \
	"$CUCO" evolve --resume 2 --shape 2048 --store "$EDB"
check "show run 2: the primary shape" 0 -- "$CUCO" show run 2 --store "$EDB"
if printf '%s\n' "$out" | grep -q '^run 2 .*gemm_allgather .*2048 '; then
	pass=$((pass + 1))
else
	failed "show run 2: the primary shape" "run 2 is not at shape 2048"
fi
# the evolve run that found no GPU failed; its report says why, first
check "report of a failed run" 0 -- "$CUCO" report 2 --store "$EDB" -o "$TMP/reports"
if grep -q '<p class="fail run-error">The run failed: .*GPU' "$TMP/reports/run-2.html" &&
	grep -q '^\*\*The run failed:\*\* .*GPU' "$TMP/reports/run-2.md"; then
	pass=$((pass + 1))
else
	failed "report of a failed run" "no reason at the top of run-2.html and run-2.md"
fi

check "show runs" 0 -- "$CUCO" show runs --store "$DB"
expect "show runs: two runs" "$(printf '%s\n' "$out" | grep -c '^run ')" -eq 2
if printf '%s\n' "$out" | grep -q '^run 1 .*bench .*gemm_allgather .*done' &&
	printf '%s\n' "$out" | grep -q '^run 2 .*bench .*gemm_allgather .*failed'; then
	pass=$((pass + 1))
else
	failed "show runs" "expected run 1 done and run 2 failed"
fi
check "show run 1" 0 -- "$CUCO" show run 1 --store "$DB"
if printf '%s\n' "$out" | grep -q '^run 1 .*gemm_allgather .*2048 .*done'; then
	pass=$((pass + 1))
else
	failed "show run 1" "no line for run 1"
fi
# the failed bench run keeps why it failed
check "show run 2: why it failed" 0 "error: " "CUDA GPU" -- "$CUCO" show run 2 --store "$DB"
# --json: every form, one JSON value with the store's column names as keys
"$CUCO" show runs --json --store "$DB" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [r["id"] for r in d] == [1, 2], d
assert d[0]["status"] == "done" and d[0]["error"] is None and d[0]["kind"] == "bench", d[0]
assert d[1]["status"] == "failed" and "CUDA GPU" in d[1]["error"], d[1]
' && pass=$((pass + 1)) || failed "show runs --json" "not the two runs with their status and error"
"$CUCO" show run 1 --json --store "$DB" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["id"] == 1 and d["workload"] == "gemm_allgather" and d["shape"] == "2048", d
assert isinstance(d["config"], dict), d["config"]
ev = d["evaluations"]
assert ev and all(e["run_id"] == 1 and e["shape"] == "2048" for e in ev), ev
assert all(set(e) >= {"stage_reached", "status", "median_us", "fitness"} for e in ev), ev[0]
' && pass=$((pass + 1)) || failed "show run 1 --json" "not run 1 with its evaluations"
"$CUCO" show program 1 --json --code --store "$DB" 2>/dev/null | python3 -c '
import json, os, sys
d = json.load(sys.stdin)
assert d["id"] == 1 and d["name"] == "baseline" and d["origin"] == "baseline", d
assert d["parents"] == [] and d["flags"] == [] and isinstance(d["evaluations"], list), d
host = open(os.path.join(os.environ["CUCO_HOME"], "workloads/gemm_allgather/host.cu")).read()
assert d["code"] == host
' && pass=$((pass + 1)) || failed "show program 1 --json --code" "not program 1 with its code"
"$CUCO" show evaluation 1 --json --logs --store "$DB" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["id"] == 1 and d["program_id"] >= 1 and "compile_log" in d and "run_log" in d, d
' && pass=$((pass + 1)) || failed "show evaluation 1 --json --logs" "not evaluation 1 with its logs"
check "show run 99 --json" nonzero "no run 99" -- "$CUCO" show run 99 --json --store "$DB"
expect "show run 99 --json: nothing on stdout" "${#out}" -eq 0
check "show run 99" nonzero "no run 99" -- "$CUCO" show run 99 --store "$DB"
check "show program 1" 0 "program 1 baseline (baseline) workload gemm_allgather" -- \
	"$CUCO" show program 1 --store "$DB"
# --code: stdout is the program's code alone (the header goes to stderr), byte for byte host.cu
check "show program 1 --code" 0 "program 1 baseline (baseline)" -- "$CUCO" show program 1 --code --store "$DB"
"$CUCO" show program 1 --code --store "$DB" 2>/dev/null | cmp -s - "$CUCO_HOME/workloads/gemm_allgather/host.cu" &&
	pass=$((pass + 1)) || failed "show program 1 --code" "stdout is not host.cu byte for byte"

# A seed whose directive is invalid is rejected before nvcc, and the store says so.
check "eval <invalid directive>" nonzero "directive rejected: " "bad_directive.cu:1:49: placement:" -- \
	"$CUCO" eval "$HERE/fixtures/cascade/bad_directive.cu" --workload gemm_allgather \
	--shape 2048 --store "$DB"
check "show run 3" 0 "stage compile status invalid" "bad_directive.cu:1:49:" -- \
	"$CUCO" show run 3 --store "$DB"

# ---- a store from a newer cuco is refused and left untouched -------------

if command -v sqlite3 >/dev/null 2>&1; then
	NEW=$TMP/new.db
	sqlite3 "$NEW" 'PRAGMA user_version=99; PRAGMA application_id=1668637551; CREATE TABLE t(x);'
	before=$(cksum <"$NEW")
	check "newer store: show" nonzero "schema version 99" "newer" -- "$CUCO" show runs --store "$NEW"
	expect "newer store: one line" "$(printf '%s\n' "$err" | wc -l)" -eq 1
	check "newer store: bench" nonzero "schema version 99" -- \
		"$CUCO" bench gemm_allgather --shape 2048 --compile-only --no-seed --store "$NEW"
	expect "newer store: unchanged" "$(cksum <"$NEW")" = "$before"
	expect "newer store: no journal left" ! -e "$NEW-journal" -a ! -e "$NEW-wal"
else
	failed "newer store" "the sqlite3 command is not installed"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
