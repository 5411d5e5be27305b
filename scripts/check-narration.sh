#!/usr/bin/env bash
# Fails when the sources, docs or tests narrate how the project was made (the
# word "session" or "issue" with a number, or a run tag: "s" and a number)
# instead of describing the software.
# History belongs in git and CHANGELOG.md; raw output under bench/results/
# keeps its own first lines. Prints file:line:text for every hit, exits 1 if any.
#
# usage: scripts/check-narration.sh [path...]   (default: the whole tree)
set -u
cd "$(dirname "$0")/.." || exit 2

roots=(README.md docs src device include tests scripts bench/probes share)
[ $# -gt 0 ] && roots=("$@")

# Tracked and new (not ignored) files when in a git checkout; every file otherwise.
list_files() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files --cached --others --exclude-standard -- "$@"
	else
		find "$@" -type f 2>/dev/null
	fi
}

# Anywhere: session or issue followed by a number (or "#"); "issues 128" as a
# verb (a thread issues 128 copies) is not one.
any_re='\b[Ss]essions? [0-9]|\b(of|in|see|by) issue [0-9]|\b[Ii]ssues? #|\b[Ii]ssue [0-9]+('"'"'s|[).,;:]|$| \()|\b[Ii]ssues [0-9]+ (and|to|or)\b'
# A run tag used as a label: in parentheses, before a colon or "'s", between
# dashes (file names), or after "in", "since", "from" and the like.
tag_re='\(s[0-9]+[),]|\bs[0-9]+:|\bs[0-9]+'"'"'s\b|-s[0-9]+-|\b(in|since|from|until|of|before|after|by) s[0-9]+\b'
# In prose (markdown, text, comments) any bare run tag is one.
word_re='\bs[0-9]+\b'

status=0
hit() { # file, grep output lines (line:text)
	while IFS= read -r l; do
		[ -n "$l" ] || continue
		printf '%s:%s\n' "$1" "$l"
		status=1
	done <<<"$2"
}

while IFS= read -r f; do
	[ -f "$f" ] || continue
	case "$f" in
	CHANGELOG.md | bench/results/*) continue ;;
	esac
	# skip binary files
	grep -Iq . "$f" 2>/dev/null || continue
	case "$f" in
	*.md | *.txt)
		hit "$f" "$(grep -nE "$any_re|$tag_re|$word_re" "$f")"
		;;
	*.c | *.h | *.cu | *.cuh | *.cc | *.cpp | *.in)
		hit "$f" "$(grep -nE "$any_re|$tag_re" "$f")"
		# bare tags only inside comments (code may name a variable that way)
		hit "$f" "$(grep -nE "(//|/\*|^[[:space:]]*\*).*$word_re" "$f" | grep -vE "$any_re|$tag_re")"
		;;
	*)
		hit "$f" "$(grep -nE "$any_re|$tag_re" "$f")"
		hit "$f" "$(grep -nE "(^|[[:space:]])#.*$word_re" "$f" | grep -vE "$any_re|$tag_re")"
		;;
	esac
done < <(list_files "${roots[@]}")

if [ $status -ne 0 ]; then
	echo "check-narration: the lines above narrate the project's history; describe the software instead (history goes in CHANGELOG.md)" >&2
fi
exit $status
