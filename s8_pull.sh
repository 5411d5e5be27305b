#!/bin/bash
# session 8 probe: push vs pull (copy engine), gemm_allgather, burst
. scripts/gpu-env.sh
export CUCO_BUILD=build-dev CUCO_COMMIT=${COMMIT:-unknown} CUCO_STATE=$PWD/.cuco
B=build-dev; V=.cuco/v; mkdir -p $V
progs=()
for x in ${VARIANTS}; do
	$B/cuco realize gemm_allgather --directive-file workloads/gemm_allgather/variants/$x.json -o $V/ga_$x.cu && progs+=(--program $V/ga_$x.cu)
done
echo "# commit $CUCO_COMMIT (CUCO_COMMIT, as in the .json beside this file), 2 x H200 (nvidia-h200-x2)" > $OUT/bench.log
timeout ${TMO:-540} $B/cuco bench gemm_allgather ${SHAPES} --timing burst --json $OUT/bench.json "${progs[@]}" >> $OUT/bench.log 2>&1
echo "rc=$?" >> $OUT/bench.log
grep -v "compile\|^cuco bench: fast" $OUT/bench.log | tail -70
