#!/bin/sh
# push_clocks.sh TEST_GEMM [ITERS] - test_gemm --push with nvidia-smi sampling
# both GPUs' SM clock and power every 50 ms beside it, then the mean clock and
# power of each GPU over each timed series (its "# window" line): does the
# bulk-copy push slow the GEMM through the power limit (lower clocks) or
# through the memory system (same clocks)?
BIN=${1:?usage: push_clocks.sh TEST_GEMM [ITERS]}
ITERS=${2:-1000}
smi=$(mktemp) out=$(mktemp)
nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,temperature.gpu --format=csv,noheader,nounits \
	-lms 50 >"$smi" &
pid=$!
sleep 1
"$BIN" --push --iters "$ITERS" | tee "$out"
rc=$?
kill $pid
python3 - "$smi" "$out" <<'PY'
import sys, datetime
samples = []
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split(',')]
    if len(f) < 5:
        continue
    try:
        t = datetime.datetime.strptime(f[0], '%Y/%m/%d %H:%M:%S.%f').timestamp()  # nvidia-smi prints local time
        samples.append((t, int(f[1]), float(f[2]), float(f[3]), float(f[4])))
    except ValueError:
        pass
print('# per timed series: mean SM clock (MHz), power (W), temperature (C) of each GPU, nvidia-smi every 50 ms')
print('#     M      N      K tile_n rows kind    n  gpu0_MHz gpu0_W gpu0_C  gpu1_MHz gpu1_W gpu1_C')
for line in open(sys.argv[2]):
    if not line.startswith('# window '):
        continue
    _, _, M, N, K, tn, rows, kind, t0, t1 = line.split()
    t0, t1 = float(t0), float(t1)
    row = []
    for g in (0, 1):
        s = [x for x in samples if x[1] == g and t0 <= x[0] <= t1]
        row.append((len(s),) + tuple(sum(x[i] for x in s) / len(s) if s else float('nan') for i in (2, 3, 4)))
    print('%7s %6s %6s %6s %4s %-5s %4d %9.0f %6.0f %6.0f %9.0f %6.0f %6.0f' % (M, N, K, tn, rows, kind, row[0][0],
          row[0][1], row[0][2], row[0][3], row[1][1], row[1][2], row[1][3]))
PY
exit $rc
