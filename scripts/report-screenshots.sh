#!/usr/bin/env bash
# report-screenshots.sh - the report views' pictures in docs/img/ from the
# unit test's run (test_report_views: the search through the fake evaluator,
# so no GPU): every evaluation, the best program's ancestry, and the first and
# last steps from seed to best, each cut out of the report with the report's own
# style and rendered by headless Chromium (Debian's `chromium`; python3-pil
# trims the margins when installed).
#
#   bash scripts/report-screenshots.sh [BUILD_DIR]     (default: build)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
command -v chromium >/dev/null || {
	echo "report-screenshots: needs chromium (apt-get install chromium)" >&2
	exit 1
}
cmake --build "$build" --target test_report_views >/dev/null
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuco-shots.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
CUCO_TEST_REPORT_DIR=$tmp "$build/test_report_views" >/dev/null 2>&1
mkdir -p docs/img
# One page per view: the report's <head> (its style), then the view alone.
python3 - "$tmp/run-1.html" "$tmp" <<'EOF'
import re, sys
html = open(sys.argv[1]).read()
head = html[:html.index("<body>") + len("<body>")]
def cut(start, end):
    a = html.index(start)
    b = html.index(end, a + len(start))
    return a, b
views = {
    "report-evaluations": cut("<h2>Every evaluation</h2>", "<h2>Lineage"),
    "report-ancestry": cut("<h3>Ancestry of the best program</h3>", "<h2>Seed to best"),
    "report-steps": cut("<h2>Seed to best, step by step</h2>", '<div class="step" data-step="2">'),
}
# the steps: the first, then the last (an LLM-style edit inside the EVOLVE-BLOCK)
last = html.rindex('<div class="step"')
tail = html[last:html.index("</div>", last) + len("</div>")]
for name, (a, b) in views.items():
    body = html[a:b] + (tail if name == "report-steps" else "")
    open(f"{sys.argv[2]}/{name}.html", "w").write(head + body + "</body></html>\n")
EOF
for view in report-evaluations:620 report-ancestry:900 report-steps:1300; do
	name=${view%%:*}
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size=1300,"${view##*:}" --screenshot="$tmp/$name.png" \
		"file://$tmp/$name.html" >/dev/null 2>&1
	# Trim the page's empty margin below and right (kept as is without PIL).
	/usr/bin/python3 - "$tmp/$name.png" "docs/img/$name.png" <<'EOF' || cp "$tmp/$name.png" "docs/img/$name.png"
import sys
from PIL import Image, ImageChops
im = Image.open(sys.argv[1]).convert("RGB")
bg = Image.new("RGB", im.size, (255, 255, 255))
box = ImageChops.difference(im, bg).getbbox()
if box:
    im = im.crop((0, 0, min(im.size[0], box[2] + 16), min(im.size[1], box[3] + 16)))
im.save(sys.argv[2], optimize=True)
EOF
	echo "docs/img/$name.png"
done
