#!/bin/sh
# push_profile.sh TEST_GEMM OUTDIR [M N K] - Nsight Compute on one launch each
# of the GEMM alone and the GEMM pushing its tiles (to a copy on the same GPU,
# and to GPU 1's copy through NVLink), per tile width and push mode, at
# ncu's locked base clock: which unit the push loads (tensor pipe, L2, DRAM,
# NVLink) and where the warps stall. Default shape: one rank's GEMM of
# gemm_allgather 8192^3 (8192 x 4096 x 8192). Writes OUTDIR/push.ncu-rep,
# OUTDIR/raw.csv and prints one summary row per launch.
BIN=${1:?usage: push_profile.sh TEST_GEMM OUTDIR [M N K]}
OUT=${2:?usage: push_profile.sh TEST_GEMM OUTDIR [M N K]}
M=${3:-8192} N=${4:-4096} K=${5:-8192}
mkdir -p "$OUT"
ncu --query-metrics >"$OUT/ncu-metrics.txt" 2>&1
# the wanted metrics this ncu knows (an unknown name would fail the whole run)
metrics=
for m in gpu__time_duration.sum sm__cycles_elapsed.avg.per_second \
	sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed \
	lts__t_bytes.sum lts__throughput.avg.pct_of_peak_sustained_elapsed \
	dram__bytes_read.sum dram__bytes_write.sum dram__throughput.avg.pct_of_peak_sustained_elapsed \
	nvltx__bytes.sum nvlrx__bytes.sum lts__t_sectors_aperture_peer.sum lts__t_sectors_aperture_device.sum; do
	grep -q "^${m%%.*} " "$OUT/ncu-metrics.txt" && metrics="$metrics${metrics:+,}$m"
done
echo "# ncu metrics: $metrics"
# --push runs 12 feature launches first; then, with --warm W --iters 1, W + 1
# launches per series in the order of run_push_timing in test_gemm.cu. No
# cache flush between passes (it would also make every peer page's first
# store miss, which real runs do not), so a series' later launches are warm.
W=${WARM:-2}
ncu --target-processes all -k regex:gemm_bf16_kernel --launch-skip 12 --launch-count $((17 * (W + 1))) \
	--cache-control none --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis \
	${metrics:+--metrics "$metrics"} -f -o "$OUT/push" \
	"$BIN" --push --warm "$W" --iters 1 --shape "$M" "$N" "$K" >"$OUT/test_gemm.log" 2>&1
rc=$?
tail -3 "$OUT/test_gemm.log"
ncu -i "$OUT/push.ncu-rep" --page raw --csv --print-units base >"$OUT/raw.csv" || exit 1
python3 - "$OUT/raw.csv" "$W" <<'PY'
import csv, sys
labels = ['256 alone', '256 16r local', '256 16r peer', '256 8r local', '256 8r peer', '256 direct local',
          '256 direct peer', '128 alone', '128 16r local', '128 16r peer', '128 direct local', '128 direct peer',
          '64 alone', '64 16r local', '64 16r peer', '64 direct local', '64 direct peer']
rows = list(csv.reader(open(sys.argv[1])))
head, units, data = rows[0], rows[1], rows[2:]
col = {h: i for i, h in enumerate(head)}
def get(r, name, scale=1.0):
    i = col.get(name)
    if i is None or not r[i].strip():
        return float('nan')
    try:
        return float(r[i].replace(',', '')) * scale
    except ValueError:
        return float('nan')
def scale_of(name, to):  # unit conversion from ncu's unit row
    u = units[col[name]] if name in col else ''
    f = {'nsecond': 1, 'usecond': 1e3, 'msecond': 1e6, 'second': 1e9, 'byte': 1, 'Kbyte': 1e3, 'Mbyte': 1e6, 'Gbyte': 1e9,
         'hz': 1, 'Khz': 1e3, 'Mhz': 1e6, 'Ghz': 1e9, 'cycle/second': 1, 'cycle/usecond': 1e6, 'cycle/nsecond': 1e9,
         'cycle/usecond': 1e6}.get(u, 1)
    return f / to
stalls = [h for h in head if h.startswith('smsp__average_warps_issue_stalled_') and h.endswith('_per_issue_active.ratio')]
print('# #i: launch i of the series (the last follows its warm-ups); ncu base clock; GB = 1e9 bytes; stalls: warps stalled per issue, top 4')
print('# %-17s %8s %6s %6s %6s %6s %7s %7s %7s %7s  %s' % ('launch', 'us', 'MHz', 'tc%', 'L2%', 'dram%', 'L2_GB',
      'drRd_GB', 'drWr_GB', 'nvlTx_GB', 'stalls'))
per = int(sys.argv[2]) + 1  # launches per series
for n, r in enumerate(data):
    t = get(r, 'gpu__time_duration.sum', scale_of('gpu__time_duration.sum', 1e3))
    f = get(r, 'sm__cycles_elapsed.avg.per_second', scale_of('sm__cycles_elapsed.avg.per_second', 1e6))
    tc = get(r, 'sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed')
    gb = lambda m: get(r, m, scale_of(m, 1e9))
    st = sorted(((get(r, h), h[len('smsp__average_warps_issue_stalled_'):-len('_per_issue_active.ratio')])
                 for h in stalls), reverse=True)[:4]
    print('%-19s %8.1f %6.0f %6.1f %6.1f %6.1f %7.2f %7.2f %7.2f %7.2f  %s' % (
        ('%s #%d' % (labels[n // per], n % per)) if n // per < len(labels) else '?', t, f,
        tc,
        get(r, 'lts__throughput.avg.pct_of_peak_sustained_elapsed'),
        get(r, 'dram__throughput.avg.pct_of_peak_sustained_elapsed'),
        gb('lts__t_bytes.sum'), gb('dram__bytes_read.sum'), gb('dram__bytes_write.sum'), gb('nvltx__bytes.sum'),
        ' '.join('%s %.2f' % (name, v) for v, name in st)))
PY
exit $rc
