#!/usr/bin/env bash
# report_render.sh - scenario test: a run's report as headless Chromium reads
# it. The report of test_report_views' run (the search through the fake
# evaluator) is parsed by Chromium (--dump-dom, no script in the page), and
# every view keeps its elements: the evaluations' markers, the ancestry's
# nodes and edges, the steps from seed to best; then a screenshot of it is
# taken. Skipped (77) without chromium.
#
#   bash tests/report_render.sh <path-to-cuco>    (test_report_views beside it)
set -u

if [ $# -ne 1 ]; then
	echo "usage: bash tests/report_render.sh <path-to-cuco>" >&2
	exit 2
fi
BUILD=$(cd "$(dirname "$1")" && pwd)
command -v chromium >/dev/null || {
	echo "report_render: no chromium here: skipped"
	exit 77
}
[ -x "$BUILD/test_report_views" ] || {
	echo "report_render: $BUILD/test_report_views is not built" >&2
	exit 1
}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuco-render.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

CUCO_TEST_REPORT_DIR=$TMP "$BUILD/test_report_views" >"$TMP/test.log" 2>&1 || {
	cat "$TMP/test.log"
	echo "0 passed, 1 failed"
	exit 1
}
HTML=$TMP/run-1.html
chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$HTML" >"$TMP/dom.html" \
	2>"$TMP/chromium.log"

# The same count in the file and in the DOM Chromium built from it: nothing
# was dropped or moved out of its <svg> by a parse error.
for what in '<circle class="ev ok"' '<path class="ev fail"' '<g class="node' \
	'<line class="edge parent"' '<line class="edge crossover"' '<div class="step"' \
	'<tr class="dimension">' '<span class="add">' '<svg' '</svg>'; do
	want=$(grep -o -F "$what" "$HTML" | wc -l)
	got=$(grep -o -F "$what" "$TMP/dom.html" | wc -l)
	if [ "$want" -gt 0 ] && [ "$want" -eq "$got" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: $what: $want in the report, $got in Chromium's DOM"
	fi
done

if chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1300,3000 \
	--screenshot="$TMP/shot.png" "file://$HTML" >>"$TMP/chromium.log" 2>&1 &&
	[ "$(stat -c %s "$TMP/shot.png" 2>/dev/null || echo 0)" -gt 10000 ]; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "FAIL: screenshot: none or empty"
	tail -n 5 "$TMP/chromium.log"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
