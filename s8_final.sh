#!/bin/bash
# session 8: re-check of the 8192 search's winner, allgather_gemm variants + PyTorch peers (burst)
. scripts/gpu-env.sh
export CUCO_BUILD=build-dev CUCO_COMMIT=${COMMIT:-unknown} CUCO_STATE=$PWD/.cuco
B=build-dev
V=.cuco/v; mkdir -p $V; progs=()
for x in $AGV; do
	f=workloads/allgather_gemm/variants/$x.json
	$B/cuco realize allgather_gemm --directive-file "$f" -o "$V/ag_$x.cu" && progs+=(--program "$V/ag_$x.cu")
done
{
echo "# commit $CUCO_COMMIT (CUCO_COMMIT, as in the .json beside this file), 2 x H200 (nvidia-h200-x2)"
timeout 280 $B/cuco bench allgather_gemm --shape 4096 --shape 8192 --timing burst --json $OUT/bench-allgather_gemm.json "${progs[@]}"; echo "rc=$?"
} > $OUT/bench-allgather_gemm.log 2>&1
timeout 150 python3 bench/torch_async_tp.py --shape 4096 --shape 8192 --timing burst --json $OUT/torch-async-tp.json > $OUT/torch-async-tp.log 2>&1; echo "torch rc=$?" >> $OUT/torch-async-tp.log
grep -v compile $OUT/bench-allgather_gemm.log | tail -45; tail -15 $OUT/torch-async-tp.log
