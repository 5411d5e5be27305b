#!/usr/bin/env bash
# check-source.sh - fail on what review keeps catching by hand:
#   - unbounded C string calls in host code (sprintf, vsprintf, strcpy, strcat,
#     gets, strtok, atoi): use snprintf, strbuf, strtol;
#   - NVLink multicast anywhere in code (cuMulticast*, multimem PTX,
#     lsaMultimem = true, NCCL_NVLS_ENABLE set to 1): it can take the GPUs out
#     of service. src/llm/reply_check.c refuses it and the prompts forbid it, so they
#     name it;
#   - a tracked source file over 800 lines that scripts/oversize.txt does not
#     list with its reason;
#   - a function over 200 lines in src/ (250 in device/) that scripts/oversize.txt
#     does not list, as FILE:FUNCTION, with its reason. A function is a body from
#     a "{" alone at column 0 to the next "}" at column 0 (the house style puts
#     them there); namespaces, extern "C" blocks and types are not functions.
# Prints file:line: why for each, exits 1 on any.
set -u
cd "$(dirname "$0")/.."
bad=0
say() { printf '%s\n' "$*"; bad=1; }
files() { git ls-files --cached --others --exclude-standard "$@"; }

while IFS=: read -r f n text; do
	say "$f:$n: unbounded string call: ${text#"${text%%[![:space:]]*}"}"
done < <(files 'src/*.c' 'src/*.h' 'device/harness/*.c' 'device/harness/*.h' 'tests/unit/*.c' 'tests/fuzz/*.c' |
	xargs -r grep -nE '(^|[^a-z_])(v?sprintf|strcpy|strcat|gets|strtok|atoi)[[:space:]]*\(' 2>/dev/null)

while IFS=: read -r f n text; do
	say "$f:$n: NVLink multicast is never used: ${text#"${text%%[![:space:]]*}"}"
done < <(files 'src/*' 'device/*' 'include/*' 'workloads/*' 'share/realize/*' 'share/fastpath/*' 'tests/gpu/*' \
	'bench/*.cu' 'bench/*.py' 'bench/probes/*' 'scripts/*' 'examples/*' | grep -v '^src/llm/reply_check.c$' |
	xargs -r grep -nE 'cuMulticast[A-Za-z]*[[:space:]]*\(|multimem\.[a-z]|lsaMultimem[[:space:]]*=[[:space:]]*true|NVLS_ENABLE[^0-9]{0,6}1' 2>/dev/null |
	grep -v '^scripts/check-source.sh:')

while read -r n f; do
	[ "$f" = total ] && continue
	[ "$n" -le 800 ] && continue
	grep -qE "^$f[[:space:]]+[^[:space:]]" scripts/oversize.txt ||
		say "$f:$n: over 800 lines (cut it at its seams, or list it in scripts/oversize.txt with the reason)"
done < <(files 'src/*.c' 'src/*.h' 'device/*.c' 'device/*.h' 'device/*.cu' 'device/*.cuh' 'include/*.h' \
	'tests/unit/*.c' 'tests/gpu/*.cu' 'tests/*.sh' 'scripts/*.sh' 'share/realize/*' 'share/fastpath/*' \
	'workloads/*.cu' 'workloads/*.cuh' | xargs -r wc -l)

long_functions() { # FILE:LINE: FILE:NAME LINES, for every function over its limit
	local f lim
	for f in $(files 'src/*.c' 'device/*.c' 'device/*.cu' 'device/*.cuh'); do
		case $f in device/*) lim=250 ;; *) lim=200 ;; esac
		awk -v f="$f" -v lim="$lim" '
		/^\{/ && start == 0 && decl !~ /^(namespace|extern "C"|struct|class|union|enum|typedef|static const|const)/ {
			start = NR; name = decl; gsub(/__launch_bounds__\([^)]*\)/, "", name); sub(/\(.*/, "", name)
			n = split(name, w, /[ \t*&]+/); name = w[n] }
		/^\}/ && start > 0 { if (NR - start + 1 > lim) printf "%s:%d: %s:%s %d\n", f, start, f, name, NR - start + 1; start = 0 }
		start == 0 && /^[A-Za-z_]/ { decl = $0; next }
		start == 0 && /^[ \t]/ { decl = decl " " $0 }' "$f"
	done
}
long_list=$(long_functions)
while read -r at key n; do
	[ -n "$at" ] || continue
	grep -qE "^$key[[:space:]]+[^[:space:]]" scripts/oversize.txt ||
		say "$at function ${key#*:} is $n lines (cut it into named steps, or list $key in scripts/oversize.txt with the reason)"
done <<<"$long_list"
long=$(printf '%s\n' "$long_list" | awk '{ print $2 }')

# every oversize line still names a file that exists and is over the limit, or a function
# that is
while read -r f _; do
	case $f in '' | '#'*) continue ;; esac
	case $f in *:*)
		printf '%s\n' "$long" | grep -qxF "$f" || say "scripts/oversize.txt: function $f is not over its limit (or gone): drop its line"
		continue ;;
	esac
	if [ ! -f "$f" ]; then say "scripts/oversize.txt: $f does not exist"; elif [ "$(wc -l <"$f")" -le 800 ]; then
		say "scripts/oversize.txt: $f is $(wc -l <"$f") lines now: drop its line"
	fi
done <scripts/oversize.txt
[ $bad -eq 0 ] && echo "check-source: clean"
exit $bad
