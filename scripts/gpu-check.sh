#!/usr/bin/env bash
# gpu-check.sh - everything cuco checks on a GPU node, in one go (one device
# lease): doctor, device-library tests (plain and under compute-sanitizer),
# the harness's failure modes, the mpirun launch path, and the benchmark.
# Usage: scripts/gpu-check.sh [quick|full|bench|agbench|slowpath|one] [OUTDIR]
# one is for a node with one GPU: the device-library tests (test_gemm under
# memcheck too), the fast path's collectives on one rank (test_fastpath_ops
# --nranks 1), every placement of both workloads verified with --ranks 1
# (nothing sent: the compute side only) by bench/probes/ragged_one_rank.sh, and
# the harness's guards (tests/gpu/guards.sh: one GPU, programs that skip work,
# replay, race their own runs or hide work from the timing). quick, full and one
# also run tests/gpu/reference.sh (a reference program, inouts, exact compare)
# and quick and full the guards too.
# bench is full's benchmark alone; full and bench read VARIANTS (names under workloads/gemm_allgather/variants);
# agbench is slowpath's allgather_gemm bench and PyTorch peers alone (SKIP_TORCH=1: without them); slowpath
# reads SHAPES ('--shape 4096 --shape 8192'), AG_VARIANTS (names under
# workloads/allgather_gemm/variants; default all), EVOLVE_WORKLOAD (gemm_allgather),
# EVOLVE_SHAPE, EVOLVE_EVALS (or EVOLVE_MINUTES),
# EVOLVE_GENERATIONS, EVOLVE_EXTRA (more evolve flags), SKIP_AG and SKIP_BENCH
# from the environment. BENCH_EXTRA goes to every cuco bench (e.g. '--timing
# burst'), TORCH_TIMING to the PyTorch peers (barrier, sustained or burst).
# PUSH_PROBE=1 (full, bench) first runs test_gemm --push: GEMM alone against
# GEMM + bulk-copy push, local and to the other GPU, per tile width.
set -u
mode=${1:-quick}
out=${2:-${OUT:-bench/results/tmp}}
mkdir -p "$out"
cd "$(dirname "$0")/.."
. scripts/gpu-env.sh
# The commit every log and JSON names. Set it where the tree was committed: a
# working tree copied to a GPU node may carry stale git metadata (seen: the
# device tool's copy reported an older HEAD), so git's answer here is marked.
if [ -z "${CUCO_COMMIT:-}" ]; then
	CUCO_COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown) (from git on $(hostname), CUCO_COMMIT unset)"
fi
export CUCO_COMMIT
export CUCO_STATE=${CUCO_STATE:-.cuco}
B=${CUCO_BUILD:-build}
log() { printf '\n=== %s\n' "$*"; }
summary=()
# cuco bench takes at most 9 --program files (16 per harness run, 7 the workload's own): bench_batches NAME WORKLOAD ARGS...
# runs one cuco bench per 9 of the realised programs in progs (each batch
# times the peers again), JSON in $out/bench-WORKLOAD[-k].json.
bench_batches() {
	local name=$1 w=$2; shift 2
	local n=${#progs[@]} k=0 i
	for ((i = 0; i == 0 || i < n; i += 18)); do
		local sfx=$([ "$n" -gt 18 ] && echo "-$k")
		step "$name$sfx" $B/cuco bench "$w" "$@" --json "$out/bench-$w$sfx.json" "${progs[@]:i:18}"
		k=$((k + 1))
	done
}
step() { # name, command...
	local name=$1; shift
	log "$name: $*"
	local t0=$(date +%s.%N)
	"$@"; local rc=$?
	summary+=("$(printf "%-28s rc=%-3s %6ss" "$name" "$rc" "$(awk -v a="$t0" -v b="$(date +%s.%N)" "BEGIN{printf \"%.1f\", b-a}")")")
	return $rc
}
# rank 1 of tests/gpu/programs/oob.cu writes out of bounds: memcheck, put in
# front of the harness the way the winner re-check does, must report it.
oob_memcheck() {
	$B/cuco eval tests/gpu/programs/oob.cu --workload gemm_allgather --shape 2048 --timeout 120 \
		--wrapper 'compute-sanitizer --tool memcheck --target-processes all' \
		--verify-runs 1 --iters 1 --warmup 1 --bench-seconds 0.01
	python3 - "$CUCO_STATE/cuco.db" >"$out/oob.log" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
run = c.execute("select max(run_id) from evaluations").fetchone()[0]
for (log,) in c.execute("select coalesce(run_log, '') from evaluations where run_id = ?", (run,)):
    print(log)
PY
	grep -m3 'Invalid __global__ write\|ERROR SUMMARY' "$out/oob.log"
	grep -q 'Invalid __global__ write' "$out/oob.log"
}
{
echo "# gpu-check $mode, $(date -u +%FT%TZ), commit $CUCO_COMMIT"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nvidia-smi topo -m
step doctor $B/cuco doctor
step fastpath $B/cuco fastpath gemm_allgather
if [ "$mode" = quick ] || [ "$mode" = full ]; then
step test_lsa timeout 120 $B/test_lsa
step test_fastpath_ops timeout 300 $B/test_fastpath_ops
step test_gemm_quick timeout 120 $B/test_gemm --quick
step test_gemm_modules timeout 60 $B/test_gemm_modules
step harness_reference env CUCO_BUILD=$B OUT="$out" bash tests/gpu/reference.sh
step guards env CUCO_BUILD=$B OUT="$out" bash tests/gpu/guards.sh
W=workloads/gemm_allgather
step eval_wrong $B/cuco eval tests/gpu/programs/wrong.cu --workload gemm_allgather --shape 2048 --timeout 20
step eval_partial $B/cuco eval tests/gpu/programs/partial.cu --workload gemm_allgather --shape 2048 --timeout 20
step eval_hang $B/cuco eval tests/gpu/programs/hang.cu --workload gemm_allgather --shape 2048 --timeout 10
step eval_crash $B/cuco eval tests/gpu/programs/crash.cu --workload gemm_allgather --shape 2048 --timeout 10
step eval_gin $B/cuco eval tests/gpu/programs/gin.cu --workload gemm_allgather --shape 2048 --timeout 20
step eval_seed_after_crash $B/cuco eval $CUCO_STATE/seeds/gemm_allgather.seed.cu --workload gemm_allgather --shape 2048
step eval_seed_mpirun $B/cuco eval $CUCO_STATE/seeds/gemm_allgather.seed.cu --workload gemm_allgather --shape 4096 \
	--launcher "mpirun -np 2 --allow-run-as-root -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x CUCO_MASTER_PORT=29533"
fi
if [ "$mode" = full ]; then
	step sanitizer_memcheck timeout 300 compute-sanitizer --tool memcheck --report-api-errors no --target-processes all $B/test_lsa --small --timeout 250
	step sanitizer_racecheck timeout 300 compute-sanitizer --tool racecheck --target-processes all $B/test_lsa --small --timeout 250
	# the winner re-check's wrapper must follow the forked ranks: rank 1's
	# invalid write has to show up in the log
	step eval_oob_memcheck oob_memcheck
fi
if [ "$mode" = full ] || [ "$mode" = bench ]; then
	[ -z "${PUSH_PROBE:-}" ] || step test_gemm_push timeout 300 $B/test_gemm --push
	V=$CUCO_STATE/variants
	mkdir -p "$V"
	progs=()
	for x in ${VARIANTS:-stream_overlap_ce8 stream_overlap_signal_ce8 stream_overlap_signal_ce16 \
		stream_overlap_signal_ce32 stream_overlap_signal_lsa16 fused_producer specialized specialized_n64 \
		fused_producer_tma_sync_auto}; do
		$B/cuco realize gemm_allgather --directive-file workloads/gemm_allgather/variants/$x.json \
			-o "$V/$x.cu" && progs+=(--program "$V/$x.cu")
	done
	bench_batches bench_all gemm_allgather ${SHAPES:+$SHAPES} ${BENCH_EXTRA:-}
elif [ "$mode" = slowpath ] || [ "$mode" = agbench ]; then
	# the slow path's GPU-side pieces: allgather_gemm with its variants and
	# the PyTorch peers (agbench: these alone), a short evolve run with its
	# re-check and report.
	V=$CUCO_STATE/variants
	mkdir -p "$V"
	progs=()
	for x in ${AG_VARIANTS:-$(cd workloads/allgather_gemm/variants && ls *.json | sed 's/\.json$//')}; do
		$B/cuco realize allgather_gemm --directive-file "workloads/allgather_gemm/variants/$x.json" \
			-o "$V/ag_$x.cu" && progs+=(--program "$V/ag_$x.cu")
	done
	[ -n "${SKIP_AG:-}" ] || bench_batches bench_allgather_gemm allgather_gemm ${SHAPES:+$SHAPES} ${BENCH_EXTRA:-}
	[ -n "${SKIP_AG:-}" ] || [ -n "${SKIP_TORCH:-}" ] || step torch_async_tp timeout 300 python3 bench/torch_async_tp.py ${SHAPES:+$SHAPES} --timing ${TORCH_TIMING:-barrier} --json "$out/torch-async-tp.json"
	if [ "$mode" = slowpath ]; then
		EW=${EVOLVE_WORKLOAD:-gemm_allgather}
		[ -n "${SKIP_BENCH:-}" ] || step bench_evolve_shape $B/cuco bench $EW --shape ${EVOLVE_SHAPE:-4096} ${BENCH_EXTRA:-} --json "$out/bench-$EW.json"
		step evolve timeout ${EVOLVE_TIMEOUT:-400} $B/cuco evolve $EW --shape ${EVOLVE_SHAPE:-4096} \
			$([ -n "${EVOLVE_MINUTES:-}" ] && echo "--budget-minutes $EVOLVE_MINUTES" || echo "--budget-evals ${EVOLVE_EVALS:-12}") --generations ${EVOLVE_GENERATIONS:-20} ${EVOLVE_EXTRA:-}
		run=$($B/cuco show runs 2>/dev/null | awk '$3 == "evolve" {r=$2} END {print r}')
		step report $B/cuco report "${run:-1}" -o "$out/report"
		cp "$CUCO_STATE/cuco.db" "$out/cuco.db" 2>/dev/null
	fi
elif [ "$mode" = one ]; then
	step test_gemm_quick timeout 120 $B/test_gemm --quick
	step test_gemm_modules timeout 60 $B/test_gemm_modules
	step test_gemm_memcheck timeout 300 compute-sanitizer --tool memcheck --error-exitcode 1 $B/test_gemm --quick
	step test_fastpath_ops timeout 300 $B/test_fastpath_ops --nranks 1
	step one_rank env CUCO_BUILD=$B OUT="$out" bash bench/probes/ragged_one_rank.sh
	step guards env CUCO_BUILD=$B OUT="$out" bash tests/gpu/guards.sh
	step harness_reference env CUCO_BUILD=$B OUT="$out" bash tests/gpu/reference.sh
elif [ "$mode" = quick ]; then
	step bench_quick $B/cuco bench gemm_allgather --shape 2048 --shape 8192 --json "$out/bench-quick.json"
fi
log summary
printf '%s\n' "${summary[@]}"
} 2>&1 | tee "$out/gpu-check-$mode.log"
