#!/usr/bin/env bash
# lift_programs.sh - the public host-NCCL programs (tests/lift/programs.tsv) lifted by `cuco init
# --from`, and on one GPU each lifted baseline checked against the program itself.
#
#   bench/probes/lift_programs.sh prepare DIR   # here (no GPU): lift, build the observing
#                                               # executables
#   bench/probes/lift_programs.sh run DIR       # on one GPU (carry DIR and the build)
#
# CUCO_BUILD names the build folder (default build); ONLY="jacobi prk" picks programs; RANKS=2
# benches on two GPUs (its outputs are not compared with the one-rank native run). Two ranks
# need kind nvidia-h200-x2 (or h100-x2), carry [".gpu", "build-gpu"], after `prepare .gpu/lift`:
#   RANKS=2 CUCO_BUILD=build-gpu bash bench/probes/lift_programs.sh run $PWD/.gpu/lift
#
# run: for every lifted package, the program itself runs natively on one rank (the observing
# build of its host.cu, cuco_dev/lift/observe.cuh) and writes its device buffers where the step
# is reached ("in") and after one pass ("out"); then `cuco bench PKG --ranks 1` runs the
# package's baseline on those same inputs (CUCO_LIFT_INPUTS), writes its first run's outputs
# (CUCO_LIFT_DUMP), verifies the fast-path seed against the baseline and times both; the last
# table compares the two outputs tensor by tensor (bitwise, and the relative L2 error).
set -u
cmd=${1:?prepare or run}
dir=${2:?output folder}
root=$(cd "$(dirname "$0")/../.." && pwd)
table=$root/tests/lift/programs.tsv
programs=${CUCO_SHARED_PROGRAMS:-$root/../shared/programs}

fields() { # name -> from flags shape expect, separated by \037 (empty fields kept)
	awk -F'\t' -v n="$1" '$1 == n { print $2 "\037" $3 "\037" $4 "\037" $5 }' "$table"
}
names() {
	if [ -n "${ONLY:-}" ]; then
		echo "$ONLY"
	else
		awk -F'\t' '!/^#/ && NF >= 5 && $5 == "lift" { print $1 }' "$table"
	fi
}
build=$(cd "$root" && realpath -m "${CUCO_BUILD:-build}")

case $cmd in
prepare)
	mkdir -p "$dir/pkgs"
	export PATH=$PATH:/usr/local/cuda/bin
	for n in $(names); do
		IFS=$'\037' read -r from flags shape expect <<<"$(fields "$n")"
		flags=${flags//\{P\}/$programs/${from%%/*}}
		rm -rf "$dir/pkgs/$n"
		eval "set -- $flags"
		"$build/cuco" init "$n" --from "$programs/$from" "$@" ${shape:+--shape "$shape"} \
			-o "$dir/pkgs/$n" > "$dir/pkgs/$n.init.log" 2>&1 || { echo "$n: init failed"; continue; }
		libs=$(python3 -c "import json;m=json.load(open('$dir/pkgs/$n/manifest.json'));print(' '.join('-l'+l for l in m['programs'][0].get('libs',[])))")
		nvcc -std=c++17 -arch=sm_90a -O3 -Xcompiler -fPIC -DCUCO_LIFT_OBSERVE -I"$root/include" \
			-I"$root/device/include" "$dir/pkgs/$n/host.cu" -o "$dir/pkgs/$n/observe" -lnccl $libs \
			> "$dir/pkgs/$n.observe.log" 2>&1 || echo "$n: the observing build failed"
		echo "$n: lifted"
	done
	;;
run)
	. "$root/scripts/gpu-env.sh"
	export CUCO_HOME=$root CUCO_STATE=${CUCO_STATE:-/tmp/cuco-lift-state}
	out=${OUT:-/tmp}
	# the programs natively, one after the other (a few seconds each)
	for n in $(names); do
		pkg=$dir/pkgs/$n
		[ -d "$pkg" ] || continue
		obs=/tmp/lift-obs/$n/native
		rm -rf "/tmp/lift-obs/$n"
		mkdir -p "$obs" "/tmp/lift-obs/$n/cuco"
		argv=$(python3 - "$pkg/manifest.json" <<'PY'
import json, re, sys
m = json.load(open(sys.argv[1]))
s = [x for x in m["shapes"] if x["name"] == m["default_shape"]][0]
print(re.sub(r"\{(\w+)\}", lambda g: str(1 if g.group(1) == "ranks" else s[g.group(1)]), m.get("argv", "")))
PY
)
		visit=$(python3 -c "import json;m=json.load(open('$pkg/manifest.json'));print([x for x in m['shapes'] if x['name']==m['default_shape']][0].get('visit',1))")
		(cd "$obs" && CUCO_LIFT_OBSERVE_DIR=$obs CUCO_LIFT_VISIT=$visit timeout 120 "$pkg/observe" $argv \
			> "$out/$n.native.log" 2>&1; echo "native rc=$?" >> "$out/$n.native.log")
		echo "$n native: $(tail -1 "$out/$n.native.log")"
	done
	# then cuco bench on each, several at a time (their compiles dominate; at one rank the
	# times check nothing but that the programs run)
	bench_one() {
		n=$1
		# the harness reads the native inputs and writes its outputs beside them: the view
		# that would keep it from the node's files is off (these are the package's own
		# programs, not a model's)
		CUCO_SANDBOX_RUN_JAIL=0 CUCO_LIFT_INPUTS=/tmp/lift-obs/$n/native \
			CUCO_LIFT_DUMP=/tmp/lift-obs/$n/cuco \
			timeout 200 "$build/cuco" bench "$dir/pkgs/$n" --ranks "${RANKS:-1}" \
			--json "$out/$n.bench.json" > "$out/$n.bench.txt" 2>&1
		echo "$n bench rc=$?"
	}
	export -f bench_one
	export dir out build RANKS
	names | tr ' ' '\n' | grep . | xargs -P "${JOBS:-6}" -I{} bash -c 'bench_one {}'
	python3 "$root/bench/probes/lift_compare.py" /tmp/lift-obs "$out" | tee "$out/lift-table.txt"
	;;
*)
	echo "usage: $0 prepare|run DIR [BUILD]" >&2
	exit 2
	;;
esac
