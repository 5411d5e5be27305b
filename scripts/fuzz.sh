#!/usr/bin/env bash
# fuzz.sh - build the libFuzzer targets (tests/fuzz, clang, ASan+UBSan) and run
# each for SECONDS (default 15), seeded from the repository's own inputs: the
# fixtures, the shipped manifests, design space and templates. Every input that
# ever crashed a target is kept under tests/fuzz/regressions/<target>/ and run
# first; a new crash is copied there, and the script fails.
#   scripts/fuzz.sh [SECONDS]        (build folder: build-fuzz; CC=clang; a target per core at a time)
set -eu
cd "$(dirname "$0")/.."
secs=${1:-15}
B=build-fuzz
CC=clang cmake -S . -B $B -DCMAKE_BUILD_TYPE=Debug -DCUCO_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null
targets=$(cd tests/fuzz && ls fuzz_*.c | sed 's/\.c$//')
work=$(mktemp -d "${TMPDIR:-/tmp}/cuco-fuzz.XXXXXX")
trap 'rm -rf "$work" "$work.build.log"' EXIT
cmake --build $B -j"$(nproc)" --target $targets >"$work.build.log" 2>&1 ||
	{ tail -n 40 "$work.build.log"; exit 1; }
# seeds TARGET: the files that start TARGET's corpus
seeds() {
	case $1 in
	fuzz_directive) ls tests/fixtures/directives/* tests/fixtures/cascade/*.cu workloads/*/variants/*.json ;;
	fuzz_manifest) ls tests/fixtures/manifests/* workloads/*/manifest.json ;;
	fuzz_design_space) ls share/design_space.json share/realize/*.cu.in ;;
	fuzz_shape_spec) printf '%s\n' 2048 M=256,N=1040,K=520 4096x4096x4096 'M=1,N=,K=9' 'x' >"$work/shape.txt" && echo "$work/shape.txt" ;;
	fuzz_llm_reply) find tests/fixtures/llm -type f ;;
	fuzz_evolve_blocks) ls share/realize/*.cu.in tests/fixtures/cascade/*.cu ;;
	esac 2>/dev/null | head -n 200
}
# fuzz TARGET: its kept regressions, then SECONDS of fuzzing; exit 1 on a crash
fuzz() {
	local t=$1 reg=tests/fuzz/regressions/$1 corpus=$work/$1
	mkdir -p "$corpus" "$work/art-$t"
	seeds "$t" | while read -r f; do
		if [ -f "$f" ]; then cp "$f" "$corpus/$(echo "$f" | tr / _)"; fi
	done
	if [ -d "$reg" ] && [ -n "$(ls -A "$reg")" ]; then
		"$B/$t" "$reg"/* >"$work/$t.replay.log" 2>&1 ||
			{ echo "fuzz: $t: a kept regression input fails again:"; tail -n 30 "$work/$t.replay.log"; return 1; }
	fi
	if "$B/$t" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$work/art-$t/" "$corpus" >"$work/$t.log" 2>&1; then
		echo "fuzz: $t: $(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$work/$t.log") inputs in ${secs} s, no crash"
	else
		mkdir -p "$reg"
		cp "$work/art-$t"/* "$reg/" 2>/dev/null || true
		echo "fuzz: $t: CRASH (kept under $reg):"
		grep -m 20 -A 12 'ERROR\|runtime error' "$work/$t.log" | head -n 40
		return 1
	fi
}
# one target per core at a time (each fuzzes on one), their reports in the targets' order
fail=0
set -- $targets
while [ $# -gt 0 ]; do
	batch=()
	for _ in $(seq "$(nproc)"); do
		[ $# -gt 0 ] || break
		batch+=("$1")
		shift
	done
	pids=()
	for t in "${batch[@]}"; do
		fuzz "$t" >"$work/$t.report" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || fail=1; done
	for t in "${batch[@]}"; do cat "$work/$t.report"; done
done
exit $fail
