#!/usr/bin/env bash
# realize_variants.sh - every shipped variant directive (workloads/*/variants)
# realises through its workload's template, and renders its pull, tail_lsa and
# push_warps, push_pace, push_last_bulk and push_last_halves knobs as given; the three code paths of gemm_allgather's pull
# (sequential, event-driven stream overlap, device-signal bands), tail_lsa's
# two (event-driven, device-signal) and the fused producer whose copying warps
# push compile for sm_90a with host warnings as errors, the last with the
# copying-warp GEMM in its object; the issuer and sync_scope dimensions reach
# the LSA comm kernels; pull and tail_lsa over LSA and push_warps without
# tma_push are refused at compile time, with the reason.
# Usage: bash tests/realize_variants.sh CUCO   (CUCO_HOME = repo root)
set -euo pipefail
cuco="$1"
root="${CUCO_HOME:-$(cd "$(dirname "$0")/.." && pwd)}"
nvcc="${NVCC:-nvcc}"
if ! command -v "$nvcc" >/dev/null 2>&1; then
	if [ -x /usr/local/cuda/bin/nvcc ]; then nvcc=/usr/local/cuda/bin/nvcc; else
		echo "realize_variants: nvcc not found (set NVCC or PATH)" >&2; exit 1; fi
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$root"
inc=()
[ -n "${CUCO_NCCL_HOME:-}" ] && inc+=(-I"$CUCO_NCCL_HOME/include")
fail=0
n=0
for f in workloads/*/variants/*.json; do
	w=$(basename "$(dirname "$(dirname "$f")")")
	v=$(basename "$f" .json)
	if ! "$cuco" realize "$w" --directive-file "$f" -o "$tmp/$w-$v.cu" >"$tmp/$w-$v.log" 2>&1; then
		echo "realize_variants: $w/$v does not realise:"; cat "$tmp/$w-$v.log"; fail=1; continue
	fi
	n=$((n + 1))
	[ "$w" = gemm_allgather ] || continue
	for knob in pull:PULL tail_lsa:TAIL_LSA push_warps:PUSH_WARPS push_pace:PUSH_PACE push_last_bulk:PUSH_LAST_BULK \
		push_last_halves:PUSH_LAST_HALVES; do
		want=$(sed -n 's/.*"'"${knob%%:*}"'":\([0-9a-z]*\).*/\1/p' "$f")
		case "$want" in true) want=1 ;; false | "") want=0 ;; esac
		grep -q "^#define CUCO_${knob#*:} $want " "$tmp/$w-$v.cu" ||
			{ echo "realize_variants: $w/$v: CUCO_${knob#*:} is not $want"; fail=1; }
	done
done
[ "$n" -ge 40 ] || { echo "realize_variants: only $n variants realised"; fail=1; }
# tail_lsa on the device-signal path too (the variants have it on the event-driven one)
sed 's/"device_signal":true}/"device_signal":true,"tail_lsa":true}/' \
	workloads/gemm_allgather/variants/stream_overlap_signal_ce8.json >"$tmp/signal_tail.json"
"$cuco" realize gemm_allgather --directive-file "$tmp/signal_tail.json" -o "$tmp/gemm_allgather-signal_tail.cu" >/dev/null
grep -q '^#define CUCO_DEVICE_SIGNAL 1 ' "$tmp/gemm_allgather-signal_tail.cu" &&
	grep -q '^#define CUCO_TAIL_LSA 1 ' "$tmp/gemm_allgather-signal_tail.cu" ||
	{ echo "realize_variants: the device-signal tail_lsa program lacks one of its knobs"; fail=1; }
compiled="sequential_ce_cublas_pull evolved_8192_burst_pull stream_overlap_ce8_signal_pull evolved_8192_s11_tail signal_tail
	fused_producer_tma_sync_auto_warps_pace50_lb"
pids=()
for v in $compiled; do
	"$nvcc" -std=c++17 -O1 -gencode=arch=compute_90a,code=sm_90a -Idevice/include -Iinclude "${inc[@]}" \
		-Xcompiler -Wall,-Wextra,-Wno-unused-parameter,-Werror \
		-c "$tmp/gemm_allgather-$v.cu" -o "$tmp/$v.o" >"$tmp/$v.nvcc" 2>&1 &
	pids+=($!)
done
i=0
for v in $compiled; do
	wait "${pids[$i]}" || { echo "realize_variants: $v does not compile:"; tail -20 "$tmp/$v.nvcc"; fail=1; }
	i=$((i + 1))
done
# the copying-warp push is the GEMM the fused producer launches (Rows -2)
if [ -f "$tmp/fused_producer_tma_sync_auto_warps_pace50_lb.o" ]; then
	nm "$tmp/fused_producer_tma_sync_auto_warps_pace50_lb.o" >"$tmp/warps.nm"
	grep -q 'gemm_push_epilogueINS_19overlap_kernel_syncELin2E' "$tmp/warps.nm" ||
		{ echo "realize_variants: no copying-warp push GEMM in the push_warps object"; fail=1; }
fi
# the issuer dimension reaches the LSA comm kernels: a warp-issued sequential
# program instantiates overlap_allgather_kernel<2>
sed 's/"issuer":"cta"/"issuer":"warp"/' workloads/gemm_allgather/variants/sequential_lsa_cublas_graph.json >"$tmp/warp.json"
"$cuco" realize gemm_allgather --directive-file "$tmp/warp.json" -o "$tmp/warp.cu" >/dev/null
grep -q '^#define CUCO_ISSUER CUCO_ISSUER_warp' "$tmp/warp.cu" || { echo "realize_variants: issuer not rendered"; fail=1; }
if "$nvcc" -std=c++17 -O1 -gencode=arch=compute_90a,code=sm_90a -Idevice/include -Iinclude "${inc[@]}" \
	-c "$tmp/warp.cu" -o "$tmp/warp.o" >"$tmp/warp.nvcc" 2>&1; then
	nm "$tmp/warp.o" >"$tmp/warp.nm"
	grep -q 'overlap_allgather_kernelILi2E' "$tmp/warp.nm" ||
		{ echo "realize_variants: no warp-issued allgather kernel in the object"; fail=1; }
else
	echo "realize_variants: the warp-issued program does not compile:"; tail -20 "$tmp/warp.nvcc"; fail=1
fi
# sync_scope for sequential lsa: cta launches the all-gather kernel (per-CTA
# barriers), grid the push kernel between barrier kernels and no all-gather
for scope in cta grid; do
	sed "s/\"sync_scope\":\"cta\"/\"sync_scope\":\"$scope\"/" \
		workloads/gemm_allgather/variants/sequential_lsa_cublas_graph.json >"$tmp/$scope.json"
	"$cuco" realize gemm_allgather --directive-file "$tmp/$scope.json" -o "$tmp/$scope.cu" >/dev/null
	"$nvcc" -std=c++17 -E -Idevice/include -Iinclude "${inc[@]}" "$tmp/$scope.cu" -o "$tmp/$scope.i" ||
		{ echo "realize_variants: sync_scope $scope does not preprocess"; fail=1; continue; }
	launches=$(grep -c 'overlap_allgather_kernel< *3 *> *<<<' "$tmp/$scope.i" || true)
	want=$([ "$scope" = cta ] && echo 1 || echo 0)
	[ "$launches" = "$want" ] ||
		{ echo "realize_variants: sync_scope $scope: $launches all-gather kernel launches, want $want"; fail=1; }
done
# refused NAME VARIANT SED REASON: the variant's directive edited by SED
# realises, but the template refuses it while preprocessing, with REASON
refused() {
	sed "$3" "workloads/gemm_allgather/variants/$2.json" >"$tmp/bad_$1.json"
	"$cuco" realize gemm_allgather --directive-file "$tmp/bad_$1.json" -o "$tmp/bad_$1.cu" >/dev/null
	if "$nvcc" -std=c++17 -E -Idevice/include -Iinclude "${inc[@]}" "$tmp/bad_$1.cu" -o "$tmp/bad_$1.i" \
		>"$tmp/bad_$1.log" 2>&1; then
		echo "realize_variants: $1 preprocessed"; fail=1
	elif ! grep -q "$4" "$tmp/bad_$1.log"; then
		echo "realize_variants: $1 failed for another reason:"; tail -5 "$tmp/bad_$1.log"; fail=1
	fi
}
# pull over LSA: kernels push
refused pull_lsa sequential_ce_cublas_pull 's/"backend":"ce"/"backend":"lsa"/' \
	"pull: the copy engine pulls the peers' blocks"
# tail_lsa anywhere but copy-engine stream overlap that pushes
refused tail_lsa_lsa evolved_8192_s11_tail 's/"backend":"ce"/"backend":"lsa"/' \
	"tail_lsa: only copy-engine stream_overlap"
# push_warps without tma_push: nothing is staged
refused warps_no_tma fused_producer_tma_sync_auto_warps \
	's/"tma_push":true,"fused_sync":true/"tma_push":false,"fused_sync":false/' \
	"push_warps: the copying warps send the tile tma_push stages"
# push_last_bulk without push_warps
refused lb_no_warps fused_producer_tma_sync_auto_warps_pace50_lb 's/"push_warps":true,"push_pace":50/"push_warps":false/' \
	"push_last_bulk: only the copying warps' push"
# push_pace without push_warps: bulk copies are not paced
refused pace_no_warps fused_producer_tma_sync_auto_warps_pace75 's/"push_warps":true/"push_warps":false/' \
	"push_pace: 0..99 percent, and only the copying warps"
# push_last_halves without push_warps, or with 64-column tiles (no 32-column half)
refused lh_no_warps fused_producer_tma_sync_n256_warps_pace50_lh 's/"push_warps":true,"push_pace":50/"push_warps":false/' \
	"push_last_halves: only the copying warps' push"
refused lh_n64 fused_producer_tma_sync_n256_warps_pace50_lh 's/"tile_n":256/"tile_n":64/' \
	"push_last_halves: only the copying warps' push"
[ "$fail" = 0 ] && echo "realize_variants: $n variants realised, pull, tail_lsa and push_warps paths compile"
exit "$fail"
