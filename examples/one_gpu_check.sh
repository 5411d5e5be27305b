#!/usr/bin/env bash
# one_gpu_check.sh - docs/your-own-workload.md and docs/export.md walked on one
# GPU: a package of every collective made by `cuco init` verifies as generated
# with --ranks 1 (the manifest's programs, the fast-path seed and the
# programs realised from its template); the package lifted from
# examples/mpi_nccl_rmsnorm.cu verifies; the seed of one package is exported,
# built with nvcc (the GPU node has no cmake: the same three libraries and the
# MPI example as the CMake project) and its MPI example and PyTorch example run
# on one rank and verify against the workload's reference.
#
#   bash examples/one_gpu_check.sh [CUCO]    (repository root; CUCO: a cuco with
#                                             init and export, cuco-harness beside it)
# Prints a summary table last; the raw output goes to stdout.
set -u
CUCO=${1:-build/cuco}
case $CUCO in
/*) ;;
*) CUCO=$PWD/$CUCO ;;
esac
. scripts/gpu-env.sh
export CUCO_HOME=$PWD
export CUCO_HARNESS=${CUCO_HARNESS:-$(dirname "$CUCO")/cuco-harness}
W=$(mktemp -d /tmp/cuco-walk.XXXXXX)
export CUCO_STATE=$W/state CUCO_STORE=$W/store.db
SUM=$W/summary
: >"$SUM"
colls="allreduce allgather reducescatter alltoall sendrecv"
progs="sequential_lsa sequential_ce stream_overlap_lsa stream_overlap_ce stream_overlap_lsa_cta"

echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)"
echo "# nvcc $(nvcc --version | tail -n 1); NCCL home ${CUCO_NCCL_HOME:-system}"

# ---- packages: made, compiled together, then run one after the other ----
for c in $colls; do
	"$CUCO" init "w_$c" --collective "$c" -o "$W/w_$c" >/dev/null || echo "init $c failed"
done
"$CUCO" init rms --from examples/mpi_nccl_rmsnorm.cu --args "{rows} {width}" \
	--shape medium:rows=4096,width=4096 -o "$W/rms" | head -n 4
for c in $colls; do
	args=()
	for p in $progs; do args+=(--program "$W/w_$c/$p.cu"); done
	"$CUCO" bench "$W/w_$c" --compile-only "${args[@]}" >"$W/compile_$c.log" 2>&1 &
done
"$CUCO" bench "$W/rms" --compile-only >"$W/compile_rms.log" 2>&1 &
wait
# ---- export the seed of the allreduce package and build it (in the background) ----
export_build() {
id=$(python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute(\"select id from programs where workload='w_allreduce' and origin='seed' limit 1\").fetchone()[0])" "$CUCO_STORE")
echo "## cuco export program $id --workload $W/w_allreduce -o $W/ex"
"$CUCO" export program "$id" --workload "$W/w_allreduce" -o "$W/ex"
N=${CUCO_NCCL_HOME:-/usr}
X=$W/ex
B=$X/build
mkdir -p "$B"
NV="nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O2 -Xcompiler -fPIC -I$X/include -I$X/src -I$X/runtime -I$X/examples -I$N/include"
L="-L$N/lib -l:libnccl.so.2 -Xlinker -rpath=$B -Xlinker -rpath=$N/lib"
$NV -shared "$X/src/workload.cu" -o "$B/libcuco_workload.so" $L &&
	$NV -shared "$X/runtime/cuco_export.cu" "$X/src/program.cu" -o "$B/libcuco_export.so" -L"$B" -lcuco_workload $L &&
	$NV -shared "$X/examples/check.cu" -o "$B/libcuco_export_check.so" -L"$B" -lcuco_export -lcuco_workload $L &&
	$NV "$X/examples/mpi_example.cu" -o "$B/mpi_example" -L"$B" -lcuco_export_check -lcuco_export -lcuco_workload $L \
		$(mpicxx --showme:compile) $(mpicxx --showme:link | sed 's/-Wl,/-Xlinker /g; s/-pthread//g') ||
	echo "export build failed"
}
N=${CUCO_NCCL_HOME:-/usr}
X=$W/ex
B=$X/build
export_build >"$W/export.log" 2>&1 &
EXPORT_PID=$!
for c in $colls rms; do
	args=()
	[ "$c" = rms ] || for p in $progs; do args+=(--program "$W/w_$c/$p.cu"); done
	pkg=$W/w_$c
	[ "$c" = rms ] && pkg=$W/rms
	echo "## cuco bench $pkg --ranks 1 --shape medium"
	"$CUCO" bench "$pkg" --ranks 1 --shape medium --iters 10 --bench-seconds 0.05 --timeout 30 \
		--json "$W/bench_$c.json" "${args[@]}" 2>&1 | grep -v '^cuco bench: compile'
	python3 - "$W/bench_$c.json" "$c" >>"$SUM" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["shapes"]:
    for h in s["harness"]:
      for p in h.get("programs", []):
        print("%-14s %-20s %-8s verified=%-5s rel_err=%-9s median_us=%s" % (
            sys.argv[2], p.get("name"), p.get("status"), p.get("verified"),
            "%.2e" % p["rel_err"] if isinstance(p.get("rel_err"), (int, float)) else "-",
            "%.1f" % p["median_us"] if isinstance(p.get("median_us"), (int, float)) else "-"))
PY
done

wait "$EXPORT_PID"
cat "$W/export.log"
for sh in small medium; do
	echo "## mpirun -np 1 $B/mpi_example $sh"
	mpirun --allow-run-as-root -np 1 -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE "$B/mpi_example" "$sh" >"$W/mpi_$sh.log" 2>&1
	r=$?
	tail -n 5 "$W/mpi_$sh.log"
	echo "mpi_example      $sh exit $r: $(grep -o 'rel_err.*' "$W/mpi_$sh.log" | head -n 1)" >>"$SUM"
done
echo "## python3 $X/examples/torch_example.py --shape small"
python3 "$X/examples/torch_example.py" --build "$B" --shape small >"$W/torch.log" 2>&1
r=$?
tail -n 8 "$W/torch.log"
echo "torch_example    small exit $r: $(grep -o 'torch [0-9].*' "$W/torch.log" | head -n 1)" >>"$SUM"

echo "## summary"
cat "$SUM"
