#!/bin/sh
# wait_probe.sh BIN - how soon streams waiting on the GPU for a value go on once
# a running kernel stores it (wait_probe.cu). Built with:
#   nvcc -O2 -std=c++17 -arch=sm_90a -Idevice/include bench/probes/wait_probe.cu -lcublas -o build-probe/wait_probe
BIN=${1:?usage: wait_probe.sh BIN}
"$BIN" 50
"$BIN" 50
