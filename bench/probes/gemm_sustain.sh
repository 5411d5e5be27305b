#!/bin/sh
# gemm_sustain.sh BIN - does a bf16 GEMM keep its speed when it runs back to
# back for seconds on both GPUs at once? Samples clocks, power and the active
# clock-event reasons with nvidia-smi while it runs.
BIN=${1:?usage: gemm_sustain.sh BIN}
run() {
	echo "== $*"
	nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 200 >/tmp/smi.txt &
	smi=$!
	CUDA_VISIBLE_DEVICES=1 "$BIN" "$@" >/tmp/s1.txt 2>&1 &
	CUDA_VISIBLE_DEVICES=0 "$BIN" "$@"
	wait $!
	kill $smi
	echo "-- GPU 1"; cat /tmp/s1.txt
	echo "-- nvidia-smi every 200 ms"; cat /tmp/smi.txt
}
run 8192 4096 8192 uniform 1 3000
sleep 5
run 8192 4096 8192 zero 1 3000
