#!/usr/bin/env bash
# workload_ranks.sh - one workload on RANKS GPUs in one device call: every
# program of its manifest (baseline, peers, compute and comm alone: the ideal
# bound and hidden fraction), its fast-path seed and every shipped variant
# (workloads/W/variants), at every shape of the manifest or SHAPES, in cuco
# bench batches of 9 --program files (each batch times the baseline and peers
# again), burst timing; then compute-sanitizer memcheck over the baseline and
# the first SAN_VARIANTS at SAN_SHAPE. Logs and JSON go to $WORK (default
# /tmp/cuco-W-R), archived as $OUT/W-R.tgz; the tables are printed last.
# LIMIT (seconds, default 540) bounds the whole; EXTRA goes to every cuco bench.
#   GPU node: CUCO_BUILD=build-dev CUCO_COMMIT=<commit> bash bench/probes/workload_ranks.sh W R
#   rehearsal on one GPU: ... bash bench/probes/workload_ranks.sh W 1
set -uo pipefail
cd "$(dirname "$0")/../.."
w=${1:?usage: workload_ranks.sh WORKLOAD RANKS}
r=${2:?usage: workload_ranks.sh WORKLOAD RANKS}
: "${OUT:?set OUT}"
B=${CUCO_BUILD:-build-dev}
. scripts/gpu-env.sh
export CUCO_STATE=${CUCO_STATE:-/tmp/cuco-state}
O=${WORK:-/tmp/cuco-$w-$r}
mkdir -p "$O/real" "$OUT" "$CUCO_STATE"
end=$((SECONDS + ${LIMIT:-540}))
shapes=${SHAPES:-$(python3 -c 'import json,sys; print(" ".join(s["name"] for s in json.load(open(sys.argv[1]))["shapes"]))' \
	"workloads/$w/manifest.json")}
progs=()
for f in workloads/"$w"/variants/*.json; do
	v=$(basename "$f" .json)
	"$B/cuco" realize "$w" --directive-file "$f" -o "$O/real/$v.cu" >/dev/null && progs+=(--program "$O/real/$v.cu")
done
left() { echo $((end - SECONDS)); }
k=0
for s in $shapes; do
	for ((i = 0; i == 0 || i < ${#progs[@]}; i += 18)); do
		[ "$(left)" -gt 30 ] || { echo "=== out of time before $s batch $k" >>"$O/bench.log"; break 2; }
		echo "=== $B/cuco bench $w --ranks $r --shape $s --timing burst ${EXTRA:-} (batch $k)" >>"$O/bench.log"
		# the seed and the manifest's programs in the first batch of each shape only
		seed=$([ "$i" -eq 0 ] || echo --no-seed)
		timeout "$(left)" "$B/cuco" bench "$w" --ranks "$r" --shape "$s" --timing burst ${EXTRA:-} $seed \
			--json "$O/bench-$s-$k.json" "${progs[@]:i:18}" >>"$O/bench.log" 2>&1
		echo "=== rc $?" >>"$O/bench.log"
		k=$((k + 1))
	done
done
san=(--program "workloads/$w/host.cu")
for v in ${SAN_VARIANTS:-}; do san+=(--program "$O/real/$v.cu"); done
if [ "$(left)" -gt 60 ] && [ -n "${SAN_SHAPE:-}" ]; then
	timeout "$(left)" "$B/cuco" bench "$w" --ranks "$r" --shape "$SAN_SHAPE" --iters 1 --warmup 1 --bench-seconds 0 \
		--no-seed --wrapper 'compute-sanitizer --tool memcheck --target-processes all' "${san[@]}" \
		>"$O/memcheck.log" 2>&1
	echo "=== memcheck rc $?" >>"$O/memcheck.log"
fi
tar czf "$OUT/$w-$r.tgz" -C "$(dirname "$O")" "$(basename "$O")"
grep -E '^(===|# [a-z_]+, shape |  [A-Za-z_0-9.=-]+ +(baseline|peer|compute|comm|seed|file|bound) )' "$O/bench.log" | cut -c1-150
grep -E 'ERROR SUMMARY|=== memcheck' "$O/memcheck.log" 2>/dev/null
