# check.sh - the scenario tests' assertions, sourced by tests/*.sh after they set TMP (a
# scratch folder): each assertion counts into pass or fail; a test prints
# "$pass passed, $fail failed" last and exits nonzero on any failure.
#   run CMD...                      CMD's exit status in rc, its stdout in out, stderr in err
#   check NAME WANT [TEXT...] -- CMD...
#                                   exit status WANT (a number, or nonzero), each TEXT in
#                                   stdout or stderr
#   expect NAME TEST...             [ TEST... ] holds
#   failed NAME WHY                 count a failure and show the last command's output
pass=0
fail=0
out=
err=
rc=0

run() {
	"$@" >"$TMP/stdout" 2>"$TMP/stderr"
	rc=$?
	out=$(cat "$TMP/stdout")
	err=$(cat "$TMP/stderr")
	if grep -q 'Sanitizer\|runtime error:' "$TMP/stderr"; then
		failed "$*" "sanitizer report"
	fi
}

failed() {
	fail=$((fail + 1))
	printf 'FAIL: %s: %s\n' "$1" "$2"
	printf '%s\n' "$out" | head -n 20 | sed 's/^/    stdout: /'
	printf '%s\n' "$err" | head -n 30 | sed 's/^/    stderr: /'
}

check() {
	local name=$1 want=$2 texts=() t
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		texts+=("$1")
		shift
	done
	shift
	run "$@"
	if [ "$want" = nonzero ]; then
		if [ "$rc" -eq 0 ]; then
			failed "$name" "exit status 0, expected nonzero"
			return 1
		fi
	elif [ "$rc" -ne "$want" ]; then
		failed "$name" "exit status $rc, expected $want"
		return 1
	fi
	for t in ${texts[@]+"${texts[@]}"}; do
		if ! printf '%s\n%s\n' "$out" "$err" | grep -qF -- "$t"; then
			failed "$name" "output lacks: $t"
			return 1
		fi
	done
	pass=$((pass + 1))
	return 0
}

expect() {
	local name=$1
	shift
	if [ "$@" ]; then
		pass=$((pass + 1))
	else
		failed "$name" "[ $* ] is false"
	fi
}
