#!/usr/bin/env bash
# nvshmem_one_pe.sh - the nvshmem backend on ONE GPU: gemm_allgather's and
# allgather_gemm's NVSHMEM programs, each in its own cuco-harness --ranks 1 run
# beside the host baseline, at a few shapes; then all of a workload's NVSHMEM
# programs in one harness run (NVSHMEM bootstrapped, finalised and bootstrapped
# again in one process, once per program). moe_layer's: one program alone
# first, then at every shape of MOE_SHAPES one harness run of the baseline and
# all of them. With one PE the harness's unique-id bootstrap, the symmetric
# heap that holds the tensors, the barriers on the stream, the hooks' teardown,
# allgather_gemm's gets (each PE gets its own shard from itself) and
# moe_layer's sequential puts (every row to itself, with its signal at cta
# scope, waited for) all run and are verified; gemm_allgather's puts and
# moe_layer's stream_overlap puts have no peer to go to. It does not check two
# PEs, and its times are not figures of the workloads.
#
# Two steps, so that the GPU machine compiles nothing:
#   here:      bench/probes/nvshmem_one_pe.sh build DIR  (nvcc, no GPU; NVSHMEM from
#              CUCO_NVSHMEM_HOME or scripts/setup-nvshmem.sh's cache)
#   GPU node:  bench/probes/nvshmem_one_pe.sh run DIR    (writes $OUT/nvshmem/*.log,
#              results.json; exits 1 unless every verified program of every run verified)
# WORKLOADS picks the workloads (all three by default; about 4 MB per NVSHMEM program:
# WORKLOADS=moe_layer keeps a folder of its own well under the 64 MiB a carry takes).
set -uo pipefail
B=${CUCO_BUILD:-build-dev}
# variants (workloads/*/variants), and each workload's fast-path seed (cuco fastpath --backend
# nvshmem): about 4 MB of shared object each (NVSHMEM's device library is linked into each)
GA=${GA:-"sequential_nvshmem stream_overlap_signal_nvshmem8"}
AG=${AG:-"sequential_nvshmem_cta_warp"}
MOE=${MOE:-"sequential_nvshmem sequential_nvshmem_cta_warp stream_overlap_nvshmem_warp stream_overlap_nvshmem_cta_thread"}
WORKLOADS=${WORKLOADS:-"gemm_allgather allgather_gemm moe_layer"}
SHAPES=${SHAPES:-"2048 4096 ragged decode"}
# moe_layer: cuco_2to1, _4to1 and _5to1 are cuco_3to1 on one rank (one expert, every token)
MOE_SHAPES=${MOE_SHAPES:-"cuco_3to1 ep4_prefill ep8_prefill ep8_skew ep4_decode ep8_decode"}

variants() { # WORKLOAD: its NVSHMEM variants in this probe
	case $1 in
	gemm_allgather) echo "$GA" ;;
	allgather_gemm) echo "$AG" ;;
	moe_layer) echo "$MOE" ;;
	esac
}
NV=${CUCO_NVSHMEM_HOME:-$HOME/.cache/cuco-nvshmem/nvidia/nvshmem}

build() { # DIR
	local d=$1 nvcc=${NVCC:-nvcc} cuco=${CUCO:-build/cuco} w v tmp
	[ -f "$NV/lib/libnvshmem_device.a" ] || { echo "nvshmem_one_pe: NVSHMEM not found at $NV" >&2; return 1; }
	tmp=$(mktemp -d)
	for w in $WORKLOADS; do
		mkdir -p "$d/$w"
		cmp -s workloads/$w/workload.cu "$d/$w/workload.cu" || cp workloads/$w/workload.cu "$d/$w/workload.cu"
		cmp -s workloads/$w/host.cu "$d/$w/baseline.cu" || cp workloads/$w/host.cu "$d/$w/baseline.cu"
		vs=$(variants $w)
		for v in $vs; do
			"$cuco" realize $w --directive-file workloads/$w/variants/$v.json -o "$tmp/$v.cu" || return 1
			cmp -s "$tmp/$v.cu" "$d/$w/$v.cu" || cp "$tmp/$v.cu" "$d/$w/$v.cu"
		done
		CUCO_STATE=$tmp "$cuco" fastpath $w --backend nvshmem -o "$tmp/seed.cu" --no-compile \
			--store "$tmp/db" >/dev/null || return 1
		cmp -s "$tmp/seed.cu" "$d/$w/seed.cu" || cp "$tmp/seed.cu" "$d/$w/seed.cu"
		# nothing else: programs left from other lists would count against the carry
		for f in "$d/$w"/*.cu; do
			case " workload baseline seed $vs " in *" $(basename "$f" .cu) "*) ;;
			*) rm -f "$f" "${f%.cu}.so" "${f%.cu}.nvcc" ;; esac
		done
	done
	rm -rf "$tmp"
	# the NVSHMEM programs as the cascade builds them (src/cascade/compile.c): relocatable
	# device code, NVSHMEM's device library linked in, its host library by soname
	for f in "$d"/*/*.cu; do [ "${f%.cu}.so" -nt "$f" ] || echo "$f"; done | xargs -P "${JOBS:-2}" -I{} sh -c '
		f=$1; w=$(basename "$(dirname "$f")"); nv=""
		head -1 "$f" | grep -q "\"nvshmem\"" && nv="-rdc=true -I'"$NV"'/include -L'"$NV"'/lib -lnvshmem_device -Xlinker -l:libnvshmem_host.so.3"
		'"$nvcc"' -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -shared -Xcompiler -fPIC \
			-cudart shared -Iinclude -Idevice/include -Iworkloads/$w -o "${f%.cu}.so" "$f" $nv -lnccl -lcublas \
			>"${f%.cu}.nvcc" 2>&1 || { echo "nvshmem_one_pe: $f does not compile"; tail -20 "${f%.cu}.nvcc"; }' _ {}
	ls "$d"/*/*.so | wc -l
	du -sh "$d"
}

params() { # WORKLOAD SHAPE: --param P=V for each of the manifest shape's parameters, and the tolerance
	python3 - "workloads/$1/manifest.json" "$2" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
s = [x for x in m["shapes"] if x["name"] == sys.argv[2]][0]
print(" ".join("--param %s=%d" % (p, s[p]) for p in m["params"]), "--tolerance", m["tolerance"])
EOF
}

harness() { # DIR WORKLOAD SHAPE PROGRAM-ARGS...: one harness run on one rank, its result line into results.json
	local d=$1 w=$2 s=$3
	shift 3
	echo "## $w $s: cuco-harness --ranks 1 $(params "$w" "$s") $*"
	# shellcheck disable=SC2046
	timeout 150 "$B/cuco-harness" --workload-so "$d/$w/workload.so" --workload $w --shape "$s" \
		$(params "$w" "$s") --ranks 1 --iters 10 --warmup 3 --bench-seconds 0 --timeout 60 --no-samples "$@" \
		>>"$O/results.json"
	local rc=$?
	echo "## rc $rc"
	return $rc
}

run() { # DIR
	local d=$1 w v s vs all first
	O=${OUT:?}/nvshmem
	. scripts/gpu-env.sh
	export NVSHMEM_DEBUG=${NVSHMEM_DEBUG:-WARN}
	mkdir -p "$O"
	: >"$O/results.json"
	{
		echo "## CUCO_NVSHMEM_HOME=${CUCO_NVSHMEM_HOME:-unset}"
		"$B/cuco" doctor 2>&1 | sed -n '/^NVSHMEM/,/IB\/RoCE NIC/p'
		ls "${CUCO_NVSHMEM_HOME:-/nonexistent}/lib" 2>&1
	} >"$O/doctor.log" 2>&1
	for w in $WORKLOADS; do
		vs=$(variants $w)
		if [ $w = moe_layer ]; then
			# one program alone (the first NVSHMEM run failing would fail every other), then
			# per shape the baseline and every program in one run
			v=${vs%% *}
			harness "$d" $w "${MOE_SHAPES%% *}" --program "baseline=$d/$w/baseline.so" \
				--program "$v=$d/$w/$v.so" || continue
			for s in $MOE_SHAPES; do
				all=(--program "baseline=$d/$w/baseline.so")
				for v in $vs seed; do all+=(--program "$v=$d/$w/$v.so"); done
				harness "$d" $w "$s" "${all[@]}"
			done
			continue
		fi
		first=1
		for s in $SHAPES; do
			for v in $vs seed; do
				harness "$d" $w "$s" --program "baseline=$d/$w/baseline.so" --program "$v=$d/$w/$v.so"
				# the first NVSHMEM run failing (bootstrap, heap) would fail every other: stop here
				[ $? = 0 ] || [ $first = 0 ] || continue 3
				first=0
			done
		done
		all=()
		for v in $vs seed; do all+=(--program "$v=$d/$w/$v.so"); done
		harness "$d" $w 2048 "${all[@]}"
	done >"$O/harness.log" 2>&1
	python3 - "$O/results.json" >"$O/table.log" <<'EOF'
import json, sys
bad = 0
print("# nvshmem backend, one H200, --ranks 1 (one PE: every peer is itself)")
print("# %-15s %-7s %-30s %-8s %-10s %10s" % ("workload", "shape", "program", "status", "rel_err", "median_us"))
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if r.get("status") != "ok":
        print("# %s %s: harness status %s: %s" % (r.get("workload"), r.get("shape"), r.get("status"), r.get("error")))
        bad += 1
    for p in r.get("programs", []):
        v = p.get("verified")
        st = p["status"] if v is not False else "WRONG"
        if p["status"] != "ok" or v is False:
            bad += 1
        err = "%.2e" % p["rel_err"] if p.get("rel_err") is not None and v is not None else "-"
        print("  %-15s %-7s %-30s %-8s %-10s %10.1f" % (r.get("workload"), r["shape"], p["name"], st, err,
                                                      p.get("median_us", 0) or 0))
print("# %d not verified" % bad)
sys.exit(1 if bad else 0)
EOF
	local rc=$?
	cat "$O/doctor.log" "$O/table.log"
	return $rc
}

case ${1:-} in
build) build "${2:?DIR}" ;;
run) run "${2:?DIR}" ;;
*) echo "usage: $0 build DIR | run DIR" >&2; exit 2 ;;
esac
