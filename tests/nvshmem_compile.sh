#!/usr/bin/env bash
# nvshmem_compile.sh - the nvshmem backend compiles: every shipped nvshmem
# variant of gemm_allgather, allgather_gemm and moe_layer realises and
# compiles with relocatable device code against NVSHMEM's headers (each
# issuer, both sync scopes, sequential and stream_overlap, device_signal),
# their comm kernels are the NVSHMEM ones; what the templates do not realise
# over NVSHMEM (fused_producer, fused_consumer, graph replay, moe_layer's
# warp- or thread-scope waits) is refused with the reason; and the fast
# path's NVSHMEM seeds (gemm_allgather's all-gather, moe_layer's all-to-all)
# go through cuco's own compile (rdc, the device library linked in, the host
# library by soname) into shared objects that export the harness's hooks and
# need libnvshmem_host.so.3. Skipped (77) where NVSHMEM is not found
# (scripts/setup-nvshmem.sh installs it).
# Usage: bash tests/nvshmem_compile.sh CUCO   (CUCO_HOME = repo root)
set -euo pipefail
cuco="$1"
root="${CUCO_HOME:-$(cd "$(dirname "$0")/.." && pwd)}"
nvcc="${NVCC:-nvcc}"
if ! command -v "$nvcc" >/dev/null 2>&1; then
	if [ -x /usr/local/cuda/bin/nvcc ]; then nvcc=/usr/local/cuda/bin/nvcc; else
		echo "nvshmem_compile: nvcc not found (set NVCC or PATH)" >&2; exit 1; fi
fi
nv="${CUCO_NVSHMEM_HOME:-${NVSHMEM_HOME:-$HOME/.cache/cuco-nvshmem/nvidia/nvshmem}}"
if [ ! -f "$nv/lib/libnvshmem_device.a" ]; then
	echo "nvshmem_compile: NVSHMEM not found ($nv); scripts/setup-nvshmem.sh installs it" >&2
	exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$root"
inc=(-Idevice/include -Iinclude -I"$nv/include")
[ -n "${CUCO_NCCL_HOME:-}" ] && inc+=(-I"$CUCO_NCCL_HOME/include")
fail=0
pids=()
names=()
for f in workloads/gemm_allgather/variants/*nvshmem*.json workloads/allgather_gemm/variants/*nvshmem*.json \
	workloads/moe_layer/variants/*nvshmem*.json; do
	w=$(basename "$(dirname "$(dirname "$f")")")
	v=$(basename "$f" .json)
	"$cuco" realize "$w" --directive-file "$f" -o "$tmp/$w-$v.cu" >/dev/null ||
		{ echo "nvshmem_compile: $w/$v does not realise"; fail=1; continue; }
	"$nvcc" -std=c++17 -O1 -rdc=true -gencode=arch=compute_90a,code=sm_90a "${inc[@]}" \
		-Xcompiler -Wall,-Wextra,-Wno-unused-parameter,-Werror \
		-c "$tmp/$w-$v.cu" -o "$tmp/$w-$v.o" >"$tmp/$w-$v.nvcc" 2>&1 &
	pids+=($!)
	names+=("$w-$v")
	# at most two nvcc at a time
	if [ ${#pids[@]} -ge 2 ]; then
		wait "${pids[0]}" || { echo "nvshmem_compile: ${names[0]} does not compile:"; tail -20 "$tmp/${names[0]}.nvcc"; fail=1; }
		pids=("${pids[@]:1}")
		names=("${names[@]:1}")
	fi
done
for i in "${!pids[@]}"; do
	wait "${pids[$i]}" || { echo "nvshmem_compile: ${names[$i]} does not compile:"; tail -20 "$tmp/${names[$i]}.nvcc"; fail=1; }
done
n=$(ls "$tmp"/*.o 2>/dev/null | wc -l)
[ "$n" -ge 16 ] || { echo "nvshmem_compile: only $n nvshmem variants compiled"; fail=1; }
# the NVSHMEM comm kernels, by issuer: puts (gemm_allgather), gets (allgather_gemm); their
# mangled names (kernel<issuer, cta scope>) in the objects' symbols
kernel() { # OBJECT PATTERN WHAT
	[ -f "$tmp/$1.o" ] || return 0
	nm "$tmp/$1.o" >"$tmp/$1.nm"
	grep -q "$2" "$tmp/$1.nm" || { echo "nvshmem_compile: $1: no $3"; fail=1; }
}
kernel gemm_allgather-sequential_nvshmem 'ga_nv_push_kernelILi3ELb1E' "per-CTA signalling push kernel (cta scope)"
kernel gemm_allgather-sequential_nvshmem_warp 'ga_nv_push_kernelILi2ELb0E' "warp-issued push kernel"
kernel gemm_allgather-sequential_nvshmem_thread 'ga_nv_push_kernelILi1ELb0E' "thread-issued push kernel"
kernel allgather_gemm-sequential_nvshmem_cta_warp 'ag_nv_gather_kernelILi2ELb1E' "per-CTA signalling warp gather"
kernel allgather_gemm-stream_overlap_nvshmem_thread2 'ag_nv_get_kernelILi1E' "thread-issued get kernel"
# moe_layer: kernel<issuer, signals>: row puts (dispatch, return), with a signal per row at cta scope
kernel moe_layer-sequential_nvshmem 'moe_nv_dispatch_kernelILi3ELb0E' "CTA-issued dispatch without signals (grid scope)"
kernel moe_layer-sequential_nvshmem_cta_warp 'moe_nv_dispatch_kernelILi2ELb1E' "warp-issued dispatch with row signals"
kernel moe_layer-sequential_nvshmem_cta_warp 'moe_nv_wait_kernel' "per-source signal wait kernel"
kernel moe_layer-stream_overlap_nvshmem_cta_thread 'moe_nv_return_kernelILi1ELb1E' "thread-issued return with row signals"
kernel moe_layer-stream_overlap_nvshmem_warp 'moe_nv_return_kernelILi2ELb0E' "warp-issued return without signals"
# refused NAME WORKLOAD VARIANT SED REASON: the edited directive realises, the template refuses it
refused() {
	sed "$4" "workloads/$2/variants/$3.json" >"$tmp/bad_$1.json"
	"$cuco" realize "$2" --directive-file "$tmp/bad_$1.json" -o "$tmp/bad_$1.cu" >/dev/null
	if "$nvcc" -std=c++17 -E "${inc[@]}" "$tmp/bad_$1.cu" -o "$tmp/bad_$1.i" >"$tmp/bad_$1.log" 2>&1; then
		echo "nvshmem_compile: $1 preprocessed"; fail=1
	elif ! grep -q "$5" "$tmp/bad_$1.log"; then
		echo "nvshmem_compile: $1 failed for another reason:"; tail -5 "$tmp/bad_$1.log"; fail=1
	fi
}
refused fused_producer gemm_allgather fused_producer 's/"backend":"lsa"/"backend":"nvshmem"/' \
	"nvshmem backend: gemm_allgather puts finished rows from comm kernels"
refused fused_consumer allgather_gemm fused_consumer 's/"backend":"lsa"/"backend":"nvshmem"/' \
	"nvshmem backend: allgather_gemm gets the shards by comm kernels"
refused graph gemm_allgather stream_overlap_nvshmem 's/"sm_split":0}/"sm_split":0,"graph":true}/' \
	"nvshmem backend: no graph replay"
# moe_layer: its cuco-realizes line admits sync_scope grid and cta only, so cuco realize refuses a
# warp scope by field; a realised program edited to one stops at the template's #error
sed 's/"sync_scope":"cta"/"sync_scope":"warp"/' workloads/moe_layer/variants/sequential_nvshmem_cta_warp.json \
	>"$tmp/bad_moe_scope.json"
if "$cuco" realize moe_layer --directive-file "$tmp/bad_moe_scope.json" -o "$tmp/bad_moe_scope.cu" \
	>"$tmp/bad_moe_scope.log" 2>&1; then
	echo "nvshmem_compile: moe_layer realised sync_scope warp"; fail=1
elif ! grep -q 'sync_scope: "warp" is not a sync_scope' "$tmp/bad_moe_scope.log"; then
	echo "nvshmem_compile: moe_layer sync_scope warp refused for another reason:"; cat "$tmp/bad_moe_scope.log"; fail=1
fi
"$cuco" realize moe_layer --directive-file workloads/moe_layer/variants/sequential_nvshmem_cta_warp.json \
	-o "$tmp/bad_moe_warp.cu" >/dev/null
sed -i 's/^#define CUCO_SYNC_SCOPE CUCO_SYNC_SCOPE_cta/#define CUCO_SYNC_SCOPE CUCO_SYNC_SCOPE_warp/' "$tmp/bad_moe_warp.cu"
if "$nvcc" -std=c++17 -E "${inc[@]}" "$tmp/bad_moe_warp.cu" -o "$tmp/bad_moe_warp.i" >"$tmp/bad_moe_warp.log" 2>&1; then
	echo "nvshmem_compile: moe_layer with a warp sync scope preprocessed"; fail=1
elif ! grep -q "sync_scope: moe_layer over nvshmem waits per grid" "$tmp/bad_moe_warp.log"; then
	echo "nvshmem_compile: moe_layer warp scope failed for another reason:"; tail -5 "$tmp/bad_moe_warp.log"; fail=1
fi
# the fast path's NVSHMEM seeds through cuco's own compile: shared objects with the hooks
for w in gemm_allgather moe_layer; do
	state="$tmp/state-$w"
	if CUCO_STATE="$state" CUCO_NVSHMEM_HOME="$nv" "$cuco" fastpath $w --backend nvshmem \
		-o "$tmp/seed-$w.cu" --store "$tmp/db-$w" >"$tmp/fastpath-$w.log" 2>&1; then
		head -1 "$tmp/seed-$w.cu" | grep -q '"backend":"nvshmem"' || { echo "nvshmem_compile: the $w seed is not nvshmem"; fail=1; }
		so=$(find "$state" -name '*.so' | head -1)
		if [ -z "$so" ]; then
			echo "nvshmem_compile: the $w seed's shared object is not in the compile cache"; fail=1
		else
			nm -D "$so" >"$tmp/seed-$w.nm"
			readelf -d "$so" >"$tmp/seed-$w.dyn"
			grep -q ' cuco_program_nvshmem_init$' "$tmp/seed-$w.nm" || { echo "nvshmem_compile: no init hook in the $w seed"; fail=1; }
			grep -q 'NEEDED.*libnvshmem_host.so.3' "$tmp/seed-$w.dyn" ||
				{ echo "nvshmem_compile: the $w seed does not need libnvshmem_host.so.3"; fail=1; }
		fi
	else
		echo "nvshmem_compile: cuco fastpath $w --backend nvshmem failed:"; tail -30 "$tmp/fastpath-$w.log"; fail=1
	fi
done
[ $fail = 0 ] && echo "nvshmem_compile: $n nvshmem variants compiled, the seeds linked"
exit $fail
