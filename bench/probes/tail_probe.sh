#!/bin/sh
# tail_probe.sh BIN - one chunk to the other GPU once a kernel on another
# stream has ended: the copy engine, a store kernel on every SM, or both at
# once; one way, then both ways at once (tail_probe.cu). Built with:
#   nvcc -O2 -std=c++17 -arch=sm_90a -Idevice/include bench/probes/tail_probe.cu -lcublas -o build-probe/tail_probe
BIN=${1:?usage: tail_probe.sh BIN}
for ways in 1 2; do
	for mib in 8 16 4 2; do "$BIN" $mib 50 $ways; done
done
