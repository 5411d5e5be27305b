#!/usr/bin/env bash
# Checks the documentation: every relative link points at a file that exists and
# every #anchor at a heading of its target (GitHub's slugs: lowercase, spaces to
# '-', punctuation dropped, "-1", "-2" for repeats); and the reference pages
# (README.md and docs/*.md, less the measurement log docs/results.md) carry no
# date (YYYY-MM-DD) and no commit hash: dated figures live in the log, where
# each names its command, commit and raw file under bench/results/.
# Prints file:line: what is wrong for every fault, exits 1 if any.
#
# usage: scripts/check-docs.sh [root]   (default: this repository)
set -u
root=${1:-"$(dirname "$0")/.."}
cd "$root" || exit 2

log=docs/results.md # the measurement log: dates and commits belong here
pages=()
for f in README.md CHANGELOG.md docs/*.md docs/*/*.md; do
	[ -f "$f" ] && pages+=("$f")
done
[ ${#pages[@]} -gt 0 ] || {
	echo "check-docs: no README.md or docs/*.md under $root" >&2
	exit 2
}
status=0

# The anchors a markdown file defines, one a line (GitHub's rules; headings in
# fenced code are not headings).
anchors() {
	awk '
	/^[ \t]*(```|~~~)/ { fence = !fence; next }
	fence || !/^#+[ \t]/ { next }
	{
		s = $0
		sub(/^#+[ \t]+/, "", s); sub(/[ \t]+#+[ \t]*$/, "", s); sub(/[ \t]+$/, "", s)
		while (match(s, /\[[^]]*\]\([^)]*\)/)) { # [text](url) keeps its text
			t = substr(s, RSTART + 1, RLENGTH - 1); sub(/\]\(.*$/, "", t)
			s = substr(s, 1, RSTART - 1) t substr(s, RSTART + RLENGTH)
		}
		s = tolower(s)
		gsub(/×|·|→|←|−|—|–|≥|≤|±|…|’|‘|“|”|≈|÷/, "", s)
		gsub(/[]!"#$%&\047()*+,.\/:;<=>?@[\\^`{|}~]/, "", s)
		gsub(/ /, "-", s)
		if (s in seen) { n = ++seen[s]; print s "-" n } else { seen[s] = 0; print s }
	}' "$1"
}

# Every link of a markdown file as "line<TAB>target", code spans and fenced code left out.
links() {
	awk '
	/^[ \t]*(```|~~~)/ { fence = !fence; next }
	fence { next }
	{
		s = $0
		gsub(/``[^`]*``/, "", s); gsub(/`[^`]*`/, "", s)
		if (match(s, /^ *\[[^]]*\]: */)) { # a reference definition
			t = substr(s, RSTART + RLENGTH); sub(/[ \t].*$/, "", t)
			print NR "\t" t
		}
		while (match(s, /\]\([^) \t]*/)) {
			print NR "\t" substr(s, RSTART + 2, RLENGTH - 2)
			s = substr(s, RSTART + RLENGTH)
		}
		t = s
		while (match(t, /(src|href)="[^"]*"/)) {
			u = substr(t, RSTART, RLENGTH); sub(/^[a-z]*="/, "", u); sub(/"$/, "", u)
			print NR "\t" u
			t = substr(t, RSTART + RLENGTH)
		}
	}' "$1"
}

fail() { # file, line, message
	printf '%s:%s: %s\n' "$1" "$2" "$3"
	status=1
}

check_links() { # file
	local f=$1 dir line target path anchor dest
	dir=$(dirname "$f")
	while IFS=$'\t' read -r line target; do
		case "$target" in
		'' | http://* | https://* | mailto:* | ftp://*) continue ;;
		esac
		path=${target%%#*}
		anchor=
		[ "$path" != "$target" ] && anchor=${target#*#}
		if [ -z "$path" ]; then
			dest=$f
		else
			dest=$dir/$path
			if [ ! -e "$dest" ]; then
				fail "$f" "$line" "broken link: $target (no file $dest)"
				continue
			fi
		fi
		[ -n "$anchor" ] || continue
		case "$dest" in
		*.md) ;;
		*) continue ;;
		esac
		[ -f "$dest" ] || continue
		if ! anchors "$dest" | grep -qxF -- "$anchor"; then
			fail "$f" "$line" "broken anchor: $target (no heading #$anchor in $dest)"
		fi
	done < <(links "$f")
}

# Dates and commit hashes: a line of a reference page that names a date, or a
# 7-40 digit hex word (letters and digits both) on a line that speaks of a commit.
# Link targets (a log entry's anchor), example timestamps (2025-01-31T12:...) and
# the Anthropic API's version header are not dates of a measurement.
check_dated() { # file
	awk -v f="$1" '
	function hexword(w) {
		return length(w) >= 7 && length(w) <= 40 && w ~ /^[0-9a-f]+$/ && w ~ /[0-9]/ && w ~ /[a-f]/
	}
	{
		s = $0
		gsub(/\]\([^)]*\)/, "](", s) # a link into the log names its entry
		gsub(/[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-9]/, "", s) # a timestamp in an example
		gsub(/anthropic-version: [0-9-]*/, "", s) # an API version, not a date
	}
	s ~ /[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]/ {
		printf "%s:%d: a date in a reference page (dated figures go in the measurement log): %s\n", f, NR, $0
		bad = 1; next
	}
	tolower(s) ~ /commit/ {
		n = split(s, w, /[^0-9A-Za-z]+/)
		for (i = 1; i <= n; i++)
			if (hexword(w[i])) {
				printf "%s:%d: a commit hash in a reference page (it belongs in the measurement log): %s\n", f, NR, $0
				bad = 1; break
			}
	}
	END { exit bad }' "$1" || status=1
}

for f in "${pages[@]}"; do
	check_links "$f"
	case "$f" in
	"$log" | CHANGELOG.md) ;;
	*) check_dated "$f" ;;
	esac
done
exit $status
