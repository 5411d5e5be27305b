#!/usr/bin/env bash
# kv_one_rank.sh - kv_transfer on ONE GPU: with --ranks 1 rank 0 prefills and
# decodes, so every K / V transfer is a scatter into its own pages (NCCL's
# send to itself, the copy engine's and the LSA stores to its own window).
# That checks each program's layers (GEMM plans, row chunks, norms, SwiGLU,
# residual adds), the block table, the scatter into the pages (and that no
# unnamed page or slot is touched) and the order of layers and transfers
# (buffer reuse, events, barriers) against the reference; it does not check
# the transfer between two GPUs, and its times are not figures of the
# workload. Every program of the manifest and the fast-path seed run at every
# shape but llama3_8b_32768 (whose reference alone takes about a minute), all
# realised variants at three shapes and one or two per placement and backend
# at the others (fewer programs at llama3_8b_8192), then cuco's GEMM against
# cuBLAS
# (build-dev/test_gemm --vs) at the per-layer GEMM shapes. TIMEOUT (seconds, default
# 150) bounds each harness call; llama3_8b_32768 needs about 500.
#
# Two steps, so that the GPU machine compiles nothing:
#   here:      bench/probes/kv_one_rank.sh build DIR   (the shared objects, nvcc, no GPU)
#   GPU node:  bench/probes/kv_one_rank.sh run DIR     (writes $OUT/kv/*.log, *.json;
#              exits 1 unless every verified program of every shape verified)
set -uo pipefail
B=${CUCO_BUILD:-build-dev}
W=workloads/kv_transfer
VARIANTS=${VARIANTS:-"sequential_lsa sequential_lsa_whole sequential_ce sequential_ce_whole stream_overlap_ce
 stream_overlap_ce4 stream_overlap_ce_graph stream_overlap_lsa stream_overlap_lsa4_thread fused_producer
 fused_producer_n128_graph fused_consumer_lsa fused_consumer_ce4 fused_consumer_lsa4_graph"}
SHAPES=${SHAPES:-"ragged cuco_3072_1024 llama3_8b_2048 small cuco_2048_512 cuco_4096_1024 cuco_3072_768 gqa_256
 llama3_8b_8192"}
# every variant at the FULL shapes; at the others one or two per placement and backend,
# and at the BIG ones (a run of a tenth of a second or more) fewer programs still
FULL=${FULL:-"ragged small cuco_2048_512"}
MID_VARIANTS=${MID_VARIANTS:-"sequential_lsa_whole stream_overlap_lsa4_thread stream_overlap_ce fused_producer
 fused_consumer_lsa fused_consumer_ce4"}
BIG=${BIG:-"llama3_8b_8192"}
BIG_PROGRAMS=${BIG_PROGRAMS:-"baseline ce_layer compute comm_nccl"}
BIG_VARIANTS=${BIG_VARIANTS:-"stream_overlap_lsa4_thread fused_producer fused_consumer_lsa"}
PROGRAMS="baseline=host ce_layer=peer_ce_layer ce_bulk=peer_ce_bulk compute=compute_only comm=comm_only
 comm_nccl=comm_nccl"

build() { # DIR
	local d=$1 nvcc=${NVCC:-nvcc} cuco=${CUCO:-build/cuco} tmp
	mkdir -p "$d"
	tmp=$(mktemp -d)
	cmp -s $W/workload.cu "$d/workload.cu" || cp $W/workload.cu "$d/workload.cu"
	for p in $PROGRAMS; do cmp -s "$W/${p#*=}.cu" "$d/${p%%=*}.cu" || cp "$W/${p#*=}.cu" "$d/${p%%=*}.cu"; done
	CUCO_STATE=$tmp "$cuco" fastpath kv_transfer -o "$tmp/seed.cu" --no-compile --store "$tmp/db" >/dev/null || return 1
	cmp -s "$tmp/seed.cu" "$d/seed.cu" || cp "$tmp/seed.cu" "$d/seed.cu"
	for v in $VARIANTS; do
		"$cuco" realize kv_transfer --directive-file "$W/variants/$v.json" -o "$tmp/$v.cu" || return 1
		cmp -s "$tmp/$v.cu" "$d/$v.cu" || cp "$tmp/$v.cu" "$d/$v.cu"
	done
	rm -rf "$tmp"
	# the template's programs first; a shared object newer than its source is kept
	for f in "$d"/*.cu; do [ "${f%.cu}.so" -nt "$f" ] || echo "$f"; done | sort -r | xargs -P "${JOBS:-2}" -I{} sh -c \
		"$nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -lineinfo -shared -Xcompiler -fPIC \
		-cudart shared -Iinclude -Idevice/include -I$W -o \"\${1%.cu}.so\" \"\$1\" -lnccl >\"\${1%.cu}.nvcc\" 2>&1 \
		|| { echo \"kv_one_rank: \$1 does not compile\"; tail -20 \"\${1%.cu}.nvcc\"; }" _ {}
	ls "$d"/*.so | wc -l
}

params() { # SHAPE: --param P=V for each of the manifest shape's parameters, and the tolerance
	python3 - "$W/manifest.json" "$1" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
s = [x for x in m["shapes"] if x["name"] == sys.argv[2]][0]
print(" ".join("--param %s=%d" % (p, s[p]) for p in m["params"]), "--tolerance", m["tolerance"])
EOF
}

harness() { # DIR SHAPE PROGRAM-ARGS...: one harness run on one rank, its result line into results.json
	local d=$1 s=$2
	shift 2
	echo "## $s: cuco-harness --ranks 1 $(params "$s") --iters 5 --warmup 2 --bench-seconds 0 ($# args)"
	# shellcheck disable=SC2046
	timeout "${TIMEOUT:-150}" "$B/cuco-harness" --workload-so "$d/workload.so" --workload kv_transfer --shape "$s" \
		$(params "$s") --ranks 1 --iters 5 --warmup 2 --bench-seconds 0 --timeout $((${TIMEOUT:-150} - 30)) --no-samples "$@" \
		>>"$O/results.json"
	echo "## rc $?"
}

run() { # DIR
	local d=$1
	O=${OUT:?}/kv
	. scripts/gpu-env.sh
	mkdir -p "$O"
	: >"$O/results.json"
	for s in $SHAPES; do
		progs=()
		for p in $PROGRAMS; do
			n=${p%%=*}
			case " $BIG " in *" $s "*) case " $BIG_PROGRAMS " in *" $n "*) ;; *) continue ;; esac ;; esac
			case $n in compute | comm | comm_nccl) progs+=(--program "$n=$d/$n.so,noverify") ;;
			*) progs+=(--program "$n=$d/$n.so") ;; esac
		done
		progs+=(--program "seed=$d/seed.so")
		vs=$MID_VARIANTS
		case " $FULL " in *" $s "*) vs=$VARIANTS ;; esac
		case " $BIG " in *" $s "*) vs=$BIG_VARIANTS ;; esac
		# the harness takes 16 programs: the manifest's, the seed and 9 variants, then the rest
		k=0
		for v in $vs; do
			if [ $k -eq 9 ]; then
				harness "$d" "$s" "${progs[@]}"
				progs=()
			fi
			progs+=(--program "$v=$d/$v.so")
			k=$((k + 1))
		done
		harness "$d" "$s" "${progs[@]}"
	done >"$O/harness.log" 2>&1
	python3 - "$O/results.json" >"$O/table.log" <<'EOF'
import json, sys
bad = 0
print("# kv_transfer, one H200, --ranks 1 (rank 0 prefills and decodes: the transfers are local scatters)")
print("# %-16s %-26s %-8s %-10s %10s" % ("shape", "program", "status", "rel_err", "median_us"))
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if r.get("status") != "ok":
        print("# %s: harness status %s: %s" % (r.get("shape"), r.get("status"), r.get("error")))
        bad += 1
    for p in r.get("programs", []):
        v = p.get("verified")
        st = p["status"] if v is not False else "WRONG"
        if p["status"] != "ok" or v is False:
            bad += 1
        err = "%.2e" % p["rel_err"] if p.get("rel_err") is not None and v is not None else "-"
        print("  %-16s %-26s %-8s %-10s %10.1f" % (r["shape"], p["name"], st, err, p.get("median_us", 0) or 0))
print("# %d not verified" % bad)
sys.exit(1 if bad else 0)
EOF
	local rc=$?
	# cuco's GEMM against cuBLAS at the per-layer shapes: QKV (H + 2KV columns), O, gate||up, down
	[ "${VS:-1}" = 1 ] || { cat "$O/table.log"; return $rc; }
	for g in "2048 5120 4096" "2048 4096 4096" "2048 28672 4096" "2048 4096 14336" "3072 5632 4096" \
		"3072 6144 4096" "4096 6144 4096" "4096 4608 4096" "4096 28672 4096" "4096 4096 14336" \
		"512 6144 4096" "512 4096 4096" "512 28672 4096" "512 4096 14336" "8192 6144 4096" "8192 28672 4096"; do
		echo "## test_gemm --vs --shape $g"
		timeout 60 "$B/test_gemm" --vs --shape $g --iters 20 --warm 5
	done >"$O/gemm_vs.log" 2>&1
	cat "$O/table.log"
	grep -h "^  *[0-9]\|vs\b" "$O/gemm_vs.log" | tail -40
	return $rc
}

case ${1:-} in
build) build "${2:?DIR}" ;;
run) run "${2:?DIR}" ;;
*) echo "usage: $0 build DIR | run DIR" >&2; exit 2 ;;
esac
