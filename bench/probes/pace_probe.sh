#!/bin/sh
# pace_probe.sh BIN - what copy-engine traffic to or from the other GPU costs
# a cuBLAS GEMM beside it, by the bytes' pacing (pace_probe.cu). Built with:
#   nvcc -O2 -std=c++17 -arch=sm_90a -Idevice/include bench/probes/pace_probe.cu -lcublas -o build-probe/pace_probe
BIN=${1:?usage: pace_probe.sh BIN}
nvidia-smi --query-gpu=index,name,clocks.sm,power.draw,temperature.gpu --format=csv
"$BIN" 8192 4096 8192 64 30
"$BIN" 8192 4096 8192 64 30
nvidia-smi --query-gpu=index,clocks.sm,power.draw,temperature.gpu --format=csv
