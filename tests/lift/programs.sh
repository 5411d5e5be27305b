#!/usr/bin/env bash
# programs.sh - scenario test of `cuco init NAME --from` on the public host-NCCL programs kept
# as test input (../shared/programs, one row each in tests/lift/programs.tsv). A "lift" row
# must exit 0 with a package whose manifest loads (cuco workloads lists it), whose host.cu and
# workload.cu compiled (init's compile check) and whose seed compiled with at least one call
# transformed; every __global__ line of the program's own files is in host.cu, and so is every
# launch. A "refuse: WORDS" row must exit nonzero with WORDS in a short message that names a
# file:line (unless the refusal is about the program as a whole) and write nothing. Last, the
# programs as a Markdown table: the collectives of the step and of the whole program, the items
# left to finish by hand, whether the seed compiles, the kernels kept.
#
#   bash tests/lift/programs.sh <path-to-cuco>   (CUCO_HOME: the source tree)
#
# The programs: $CUCO_SHARED_PROGRAMS, else ../shared/programs beside the source tree (or
# ../../shared/programs from a worktree); without them the test is skipped (exit 77), as it is
# without libclang or nvcc. Each package is compiled once, CUCO_TEST_JOBS (default: the cores, at
# most 4) at a time; CUCO_LIFT_ONLY="NAME ..." takes those rows alone. Prints one line per
# failure and "N passed, N failed"; exits 1 on any.
set -u

if [ $# -ne 1 ]; then
	echo "usage: bash tests/lift/programs.sh <path-to-cuco>" >&2
	exit 2
fi
CUCO=$1
case $CUCO in
/*) ;;
*) CUCO=$PWD/$CUCO ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
TABLE=$HERE/programs.tsv
DUMP=$(dirname "$CUCO")/lift_dump
export CUCO_HOME=${CUCO_HOME:-$SRC}

PROGRAMS=${CUCO_SHARED_PROGRAMS:-}
if [ -z "$PROGRAMS" ]; then
	for d in "$SRC/../shared/programs" "$SRC/../../shared/programs"; do
		[ -d "$d" ] && PROGRAMS=$d && break
	done
fi
if [ -z "$PROGRAMS" ] || [ ! -d "$PROGRAMS" ]; then
	echo "SKIPPED: the shared programs are not here (set CUCO_SHARED_PROGRAMS, or put them in" \
		"$SRC/../shared/programs)"
	exit 77
fi
PROGRAMS=$(cd "$PROGRAMS" && pwd)
command -v nvcc >/dev/null || PATH=$PATH:/usr/local/cuda/bin
if ! command -v nvcc >/dev/null; then
	echo "SKIPPED: no nvcc (the test checks that every lifted package compiles)"
	exit 77
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuco-liftprog.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
export CUCO_STATE=$TMP/state
export CUCO_STORE=$TMP/default.db
# the packages go where `cuco workloads` finds them: a cuco home of their own
HOME_DIR=$TMP/home
PKGS=$HOME_DIR/workloads
mkdir -p "$PKGS" "$TMP/logs"
ln -s "$CUCO_HOME/include" "$HOME_DIR/include"
cd "$TMP" || exit 2

# libclang: a program that lifts, without the compile
"$CUCO" init probe --from "$SRC/tests/fixtures/lift/plan/step_warmup.cu" --no-compile \
	-o "$TMP/probe" >"$TMP/probe.out" 2>&1
if grep -q "libclang" "$TMP/probe.out" && [ ! -d "$TMP/probe" ]; then
	echo "SKIPPED: $(grep -m1 libclang "$TMP/probe.out")"
	exit 77
fi

pass=0
fail=0
failed() {
	fail=$((fail + 1))
	printf 'FAIL: %s: %s\n' "$1" "$2"
}

# The rows: name, path, flags, shape, expectation (comments and short rows skipped), their
# fields split by US (\037): a tab is blank to `read`, and runs of blanks (an empty field) would
# merge.
mapfile -t ROWS < <(awk -F'\t' -v OFS='\037' '!/^#/ && NF >= 5 { $1 = $1; print }' "$TABLE")
if [ -n "${CUCO_LIFT_ONLY:-}" ]; then # a few rows by name: CUCO_LIFT_ONLY="prk umd"
	mapfile -t ROWS < <(printf '%s\n' "${ROWS[@]}" |
		awk -F'\037' -v only=" $CUCO_LIFT_ONLY " 'index(only, " " $1 " ")')
fi
[ "${#ROWS[@]}" -gt 0 ] || {
	echo "no rows in $TABLE"
	exit 1
}

# init NAME: run `cuco init` for the row, its output in logs/NAME.{out,rc}
init() {
	local name=$1 from=$2 flags=$3 shape=$4 expect=$5 extra=()
	flags=${flags//\{P\}/$PROGRAMS/${from%%/*}}
	eval "set -- $flags"
	[ "$expect" = lift ] || extra=(--no-compile) # a refusal comes before any compile
	"$CUCO" init "$name" --from "$PROGRAMS/$from" "$@" ${shape:+--shape "$shape"} "${extra[@]}" \
		-o "$PKGS/$name" >"$TMP/logs/$name.out" 2>&1
	echo $? >"$TMP/logs/$name.rc"
}

# two inits at once fill the cores one leaves idle (its libclang parse, its last nvcc)
jobs=${CUCO_TEST_JOBS:-$(($(nproc) < 4 ? $(nproc) : 4))}
start=$SECONDS
for row in "${ROWS[@]}"; do
	IFS=$'\037' read -r name from flags shape expect <<<"$row"
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
	done
	init "$name" "$from" "$flags" "$shape" "$expect" &
done
wait
echo "# cuco init of ${#ROWS[@]} programs: $((SECONDS - start)) s"

# cuco workloads in the packages' home: every lifted package's manifest loads
CUCO_HOME=$HOME_DIR "$CUCO" workloads >"$TMP/workloads.out" 2>&1
workloads_rc=$?

# stats NAME PKG ROOT: the package's numbers, tab-separated: step collectives, program
# collectives, kernels kept/found, launches kept/found, problems ("" when none)
stats() {
	python3 - "$@" <<'PY'
import collections, json, os, re, sys
name, pkg, root, facts = sys.argv[1:5]
lift = json.load(open(os.path.join(pkg, "lift.json")))
host = open(os.path.join(pkg, "host.cu"), errors="replace").read()
host_lines = set(l.strip() for l in host.splitlines())
step = collections.Counter(c["call"] for c in lift["step_calls"]
                           if c["call"] not in ("ncclGroupStart", "ncclGroupEnd"))
step_text = "%d: %s" % (sum(step.values()), ", ".join(
    "%s x%d" % (k, v) if v > 1 else k for k, v in sorted(step.items()))) if step else "0"
program = "?"
if os.path.exists(facts):
    try:
        f = json.load(open(facts))
        seen = set((c["name"]["file"], c["name"]["offset"]) for c in f["calls"]
                   if c.get("host_collective"))
        program = str(len(seen))
    except (ValueError, KeyError):
        pass
problems = []
kernels, kept, launches, launches_kept = [], 0, 0, host.count("<<<")
for rel in lift["files"]:
    path = rel if os.path.isabs(rel) else os.path.join(root, rel)
    try:
        text = open(path, errors="replace").read()
    except OSError as e:
        problems.append("%s: %s" % (rel, e))
        continue
    launches += text.count("<<<")
    for n, line in enumerate(text.splitlines(), 1):
        if "__global__" not in line or line.strip().startswith(("//", "*", "/*", "#")):
            continue
        m = re.search(r"(\w+)\s*\(", re.sub(r"__launch_bounds__\s*\([^)]*\)", "", line.split("__global__", 1)[1]))
        kernels.append(m.group(1) if m else "?")
        if line.strip() in host_lines:
            kept += 1
        else:
            problems.append("%s:%d: the kernel line is not in host.cu: %s" % (rel, n, line.strip()))
if launches_kept < launches:
    problems.append("%d launches (<<<) in the program, %d in host.cu" % (launches, launches_kept))
print("\t".join([step_text, program, "%d/%d" % (kept, len(kernels)),
                 "%d/%d" % (min(launches, launches_kept), launches), "; ".join(problems)]))
PY
}

ROWS_MD=()
for row in "${ROWS[@]}"; do
	IFS=$'\037' read -r name from flags shape expect <<<"$row"
	out=$TMP/logs/$name.out
	rc=$(cat "$TMP/logs/$name.rc")
	pkg=$PKGS/$name
	root=$PROGRAMS/$from
	[ -d "$root" ] || root=$(dirname "$root")
	why=
	if [ "$expect" = lift ]; then
		[ "$rc" -eq 0 ] || why="exit status $rc"
		grep -q "^wrote $pkg: workload $name lifted from" "$out" || why="${why:+$why; }no 'wrote' line"
		for f in host.cu workload.cu manifest.json lift.json; do
			[ -s "$pkg/$f" ] || why="${why:+$why; }no $f"
		done
		# init's compile check: host.cu and workload.cu, or it writes nothing
		grep -q "does not compile" "$out" && why="${why:+$why; }$(grep -m1 'does not compile' "$out")"
		seed=$(sed -n 's/^  seed: compiles, \([0-9]*\) calls\{0,1\} transformed$/\1/p' "$out")
		[ -n "$seed" ] && [ "$seed" -ge 1 ] ||
			why="${why:+$why; }the seed: $(grep -m1 '^  seed:' "$out")"
		grep -q "^$name: " "$TMP/workloads.out" ||
			why="${why:+$why; }cuco workloads does not list it"
		items=$(sed -n 's/^  \([0-9]*\) items\{0,1\} left to finish by hand$/\1/p' "$out")
		[ -n "$items" ] || why="${why:+$why; }no 'items left' line"
		if [ -z "$why" ]; then
			# the whole program's collectives, as the lift's front end sees them
			fl=()
			eval "set -- ${flags//\{P\}/$PROGRAMS/${from%%/*}}"
			while [ $# -gt 0 ]; do
				case $1 in
				-D | --define) fl+=(-D "$2"); shift ;;
				--include-dir) fl+=(-I "$2"); shift ;;
				--args | --shape | --step | --entry | --arg) shift ;;
				esac
				shift
			done
			src=()
			[ -f "$PROGRAMS/$from" ] && src=("$PROGRAMS/$from")
			[ -x "$DUMP" ] && "$DUMP" --root "$root" \
				--overlay "$CUCO_HOME/device/include/cuco_dev/lift" "${fl[@]}" "${src[@]}" \
				>"$TMP/logs/$name.facts.json" 2>/dev/null
			IFS=$'\t' read -r step_c prog_c kernels launches problems \
				<<<"$(stats "$name" "$pkg" "$root" "$TMP/logs/$name.facts.json")"
			[ -n "$problems" ] && why=$problems
			ROWS_MD+=("| $name | $step_c | $prog_c | $items | yes ($seed transformed) | $kernels |")
		fi
	else
		words=${expect#refuse: }
		[ "$rc" -ne 0 ] || why="exit status 0, expected a refusal"
		grep -qF -- "$words" "$out" || why="${why:+$why; }no '$words'"
		case $words in
		"no main()" | "no NCCL"*) ;; # about the program as a whole: no place to name
		*)
			grep -qE '[A-Za-z0-9_.-]+\.(c|cc|cpp|cxx|cu|cuh|h|hpp):[0-9]+' "$out" ||
				why="${why:+$why; }no file:line in the message"
			;;
		esac
		[ "$(wc -l <"$out")" -le 4 ] || why="${why:+$why; }$(wc -l <"$out") lines, not a short message"
		[ -e "$pkg" ] && why="${why:+$why; }$pkg was written"
		compgen -G "$pkg.lift-*" >/dev/null && why="${why:+$why; }a $pkg.lift-* folder is left"
		ROWS_MD+=("| $name | refused: $words | | | | |")
	fi
	if [ -n "$why" ]; then
		failed "$name" "$why"
		sed 's/^/    /' "$out" | head -20
	else
		pass=$((pass + 1))
	fi
done
[ "$workloads_rc" -eq 0 ] || {
	failed "cuco workloads" "exit status $workloads_rc"
	sed 's/^/    /' "$TMP/workloads.out" | head -10
}

echo
echo "| program | collectives in the step | in the program | items left by hand | seed compiles | kernels kept |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${ROWS_MD[@]}"
echo
printf '%d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]
