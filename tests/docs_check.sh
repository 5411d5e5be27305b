#!/usr/bin/env bash
# docs_check.sh - scenario test of scripts/check-docs.sh on small trees of its
# own: a clean tree passes; a broken anchor, a link to a missing file, a date or
# a commit hash in a reference page each fail, naming file:line; the measurement
# log (docs/results.md) may hold dates and commits; GitHub's slugs (punctuation
# dropped, "-1" for a repeated heading) resolve; headings in fenced code and
# links in code spans are not taken. Last, the source tree itself passes.
#
#   bash tests/docs_check.sh [path-to-cuco]   (CUCO_HOME: the source tree; cuco is unused)
#
# Needs bash, awk, grep, sed. Prints one line per failure and "N passed, N failed" last.
set -u
src=${CUCO_HOME:-"$(cd "$(dirname "$0")/.." && pwd)"}
check=$src/scripts/check-docs.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
	echo "FAIL: $*"
	fail=$((fail + 1))
}

# A clean tree: README and a reference page link each other and the log by anchor.
clean() { # dir
	mkdir -p "$1/docs" "$1/bench/results"
	echo raw >"$1/bench/results/run.log"
	cat >"$1/README.md" <<'EOF'
# tool

See [the guide](docs/guide.md#the-planner-plan_init-and-friends) and
[the log](docs/results.md#all-shapes-2026-12-01-commit-e22b9f1).
EOF
	cat >"$1/docs/guide.md" <<'EOF'
# Guide

## The planner: `plan_init` and friends

Timed in [the log](results.md#all-shapes-2026-12-01-commit-e22b9f1), twice
([again](#notes-1)); back to the [README](../README.md) and [top](#guide).
A link in code is no link: `[x](missing.md)`.

```
## not a heading
[y](also-missing.md)
```

## Notes

## Notes

Timestamps look like `2025-01-31T12:00:00.123Z`.
EOF
	cat >"$1/docs/results.md" <<'EOF'
# Measured results

## All shapes (2026-12-01, commit e22b9f1)

`tool bench` at commit e22b9f1, raw [`run.log`](../bench/results/run.log).
EOF
}

expect_pass() { # name dir
	local out
	if out=$(bash "$check" "$2" 2>&1); then ok; else bad "$1: expected to pass, got: $out"; fi
}
expect_fail() { # name dir pattern
	local out
	if out=$(bash "$check" "$2" 2>&1); then
		bad "$1: expected to fail"
	elif ! grep -qE -- "$3" <<<"$out"; then
		bad "$1: output lacks /$3/: $out"
	else
		ok
	fi
}

clean "$tmp/clean"
expect_pass "clean tree" "$tmp/clean"

clean "$tmp/anchor"
sed -i 's/#notes-1/#notes-2/' "$tmp/anchor/docs/guide.md"
expect_fail "broken anchor" "$tmp/anchor" '^docs/guide\.md:6: broken anchor: #notes-2'

clean "$tmp/file"
echo 'See [gone](docs/gone.md).' >>"$tmp/file/README.md"
expect_fail "missing file" "$tmp/file" '^README\.md:5: broken link: docs/gone\.md'

clean "$tmp/dated"
echo 'Measured on 2026-11-30: 35 us.' >>"$tmp/dated/docs/guide.md"
expect_fail "dated line" "$tmp/dated" '^docs/guide\.md:[0-9]+: a date in a reference page'

clean "$tmp/hash"
echo 'Faster since commit 6b6490b.' >>"$tmp/hash/README.md"
expect_fail "commit hash" "$tmp/hash" '^README\.md:5: a commit hash in a reference page'

clean "$tmp/raw"
echo 'Raw output: [`run.log`](../bench/results/gone.log).' >>"$tmp/raw/docs/results.md"
expect_fail "log's raw file missing" "$tmp/raw" '^docs/results\.md:[0-9]+: broken link: \.\./bench/results/gone\.log'

if bash "$check" "$src" >"$tmp/src.out" 2>&1; then ok; else bad "the source tree: $(head -5 "$tmp/src.out")"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
