#!/usr/bin/env bash
# attention_probe.sh - the attention kernel on ONE GPU: tests/gpu/test_attention
# (both kernels against the fp32 reference at every case) and
# bench/attention_vs.py (cuco vs PyTorch's flash and cuDNN attention at the
# per-rank problems of attention_cp's shapes). Binaries are built beforehand,
# off the GPU machine, into $ATTN_BUILD (default build-attn-dev):
#   nvcc -arch=sm_90a -O3 -std=c++17 -Iinclude -Idevice/include \
#     -o build-attn-dev/test_attention tests/gpu/test_attention.cu
#   nvcc -arch=sm_90a -O3 -std=c++17 -shared -Xcompiler -fPIC -Iinclude -Idevice/include \
#     -o build-attn-dev/libcuco_attention_vs.so bench/attention_vs.cu
#   GPU node: bench/probes/attention_probe.sh [test] [vs] [sanitize]   (default: test vs;
#             writes $OUT/attention-*.log, $OUT/attention-vs.json; exits 1 on any failure)
#   VS_ARGS: extra arguments for attention_vs.py (e.g. "--only llama_s16384 --iters 10")
set -uo pipefail
B=${ATTN_BUILD:-build-attn-dev}
O=${OUT:?}
steps=${*:-test vs}
rc=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | sed 's/^/# gpu: /'
for s in $steps; do
	case $s in
	test)
		echo "## $B/test_attention"
		timeout 300 "$B/test_attention" 2>&1 | tee "$O/attention-test.log"
		r=${PIPESTATUS[0]}
		echo "## rc $r"
		[ "$r" = 0 ] || rc=1
		;;
	sanitize)
		echo "## compute-sanitizer --tool memcheck $B/test_attention --quick"
		timeout 300 compute-sanitizer --tool memcheck "$B/test_attention" --quick >"$O/attention-sanitize.log" 2>&1
		r=$?
		tail -3 "$O/attention-sanitize.log"
		echo "## rc $r"
		[ "$r" = 0 ] || rc=1
		;;
	vs)
		echo "## python3 bench/attention_vs.py $B/libcuco_attention_vs.so ${VS_ARGS:-}"
		PYTHONUNBUFFERED=1 timeout 400 python3 bench/attention_vs.py "$B/libcuco_attention_vs.so" \
			--json "$O/attention-vs.json" ${VS_ARGS:-} 2>&1 | tee "$O/attention-vs.log"
		r=${PIPESTATUS[0]}
		echo "## rc $r"
		[ "$r" = 0 ] || rc=1
		;;
	*) echo "attention_probe.sh: unknown step $s (test, vs, sanitize)" >&2; exit 2 ;;
	esac
done
exit $rc
