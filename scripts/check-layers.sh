#!/usr/bin/env bash
# check-layers.sh - hold the host code's layering: fail on any import circle in
# src/ (and device/harness/) and on any arrow that runs up the floors below.
#
# A module is a source file with its same-name header (src/llm/reply.c and
# src/llm/reply.h are one). Module A depends on module B when
#   - A includes B's header (read from the sources; a header with no source of
#     its name, such as an internal header a folder's files share, only
#     declares: including it counts as including what it includes), or
#   - A's object uses a symbol B's object defines (read with nm from the
#     build's objects, so a shared internal header that declares functions of
#     three files does not hide who calls whom).
# The floors, bottom to top: a folder may depend on its own floor and those
# below it, never on one above. Inside a folder the modules form no circle, so
# a reader can start at a folder's lowest file and read up.
#
# A folder whose circle is not broken yet is listed, with the reason, in
# scripts/layers-known.txt: its circles are printed but pass; a listed folder
# with no circle left fails (take it off the list).
#
# Usage: scripts/check-layers.sh [BUILD_DIR]   (default: build; run it after a
# build: the objects are where the calls are read). Prints each circle and each
# upward arrow with the include or the symbol that makes it, exits 1 on any.
set -u
cd "$(dirname "$0")/.."

# The floors, bottom to top (docs/architecture.md, "Layers", says why).
FLOORS="src/util src/workload src/program src/store src/llm src/cascade src/farm
	src/fastpath src/search src/lift src/report device/harness src/cli"

build=${1:-build}
objdirs=""
for t in cuco_core cuco_cli cuco cuco-harness; do
	[ -d "$build/CMakeFiles/$t.dir" ] && objdirs="$objdirs $build/CMakeFiles/$t.dir"
done
if [ -z "$objdirs" ]; then
	echo "check-layers: no objects under $build/CMakeFiles (build cuco_core, cuco and cuco-harness first)" >&2
	exit 2
fi

sources=$(git ls-files --cached --others --exclude-standard 'src/*.c' 'src/*.h' \
	'device/harness/*.c' 'device/harness/*.h' 'device/harness/*.cu')

# "include FROM_FILE TO_FILE": project headers only (same folder, then src/).
edges_include() {
	local f inc d
	for f in $sources; do
		case $f in *.c | *.cu) printf 'source %s\n' "$f" ;; esac
		d=$(dirname "$f")
		grep -oE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' "$f" | sed -E 's/.*"([^"]+)"/\1/' |
			while read -r inc; do
				if [ -f "$d/$inc" ]; then
					printf 'include %s %s\n' "$f" "$(realpath -m --relative-to=. "$d/$inc")"
				elif [ -f "src/$inc" ]; then
					printf 'include %s src/%s\n' "$f" "$inc"
				fi
			done
	done
}

# "def OBJECT SYMBOL" and "use OBJECT SYMBOL" from the build's objects; OBJECT
# is named by its source (src/llm/reply.c).
edges_symbols() {
	local o src
	find $objdirs -name '*.o' | sort | while read -r o; do
		src=${o#*.dir/}
		src=${src%.o}
		[ -f "$src" ] || continue
		[ "$o" -ot "$src" ] && continue # stale: a target that no longer builds it
		nm -P --defined-only "$o" 2>/dev/null | awk -v s="$src" '$2 ~ /^[TDBRGS]$/ { print "def", s, $1 }'
		nm -P --undefined-only "$o" 2>/dev/null | awk -v s="$src" '{ print "use", s, $1 }'
	done
}

{
	edges_include
	edges_symbols
} | awk -v floors="$FLOORS" -v dump="${LAYERS_DUMP:-}" -v known=scripts/layers-known.txt '
function module(path) { sub(/\.(c|h|cu)$/, "", path); return path }
function folder(m) { sub(/\/[^\/]*$/, "", m); return m }
function edge(a, b, why) {
	if (a == b) return
	if (!((a, b) in why_of)) { why_of[a, b] = why; nout[a]++; out[a, nout[a]] = b }
	node[a] = 1; node[b] = 1
}
# Tarjan: the strongly connected components with more than one module are circles.
function visit(v,    i, w, c) {
	idx[v] = lowl[v] = ++counter; stack[++sp] = v; on[v] = 1
	for (i = 1; i <= nout[v]; i++) {
		w = out[v, i]
		if (!(w in idx)) { visit(w); if (lowl[w] < lowl[v]) lowl[v] = lowl[w] }
		else if (on[w] && idx[w] < lowl[v]) lowl[v] = idx[w]
	}
	if (lowl[v] == idx[v]) {
		ncomp++; c = 0
		do { w = stack[sp--]; on[w] = 0; comp[w] = ncomp; c++ } while (w != v)
		size[ncomp] = c; root[ncomp] = v
	}
}
# One shortest way round a circle through s, each step with what makes it.
function circle(s, k,    q, h, t, v, i, w, from, path, n) {
	h = 1; t = 1; q[1] = s; split("", from)
	while (h <= t) {
		v = q[h++]
		for (i = 1; i <= nout[v]; i++) {
			w = out[v, i]
			if (comp[w] != k) continue
			if (w == s) { from[s] = v; h = t + 1; break }
			if (!(w in from)) { from[w] = v; q[++t] = w }
		}
	}
	path = ""; v = s; n = 0
	do { w = from[v]; path = "  " w " -> " v " (" why_of[w, v] ")\n" path; v = w } while (v != s && ++n < 1000)
	return path
}
BEGIN { n = split(floors, fl, /[[:space:]]+/); for (i = 1; i <= n; i++) if (fl[i] != "") floor[fl[i]] = i }
# Through headers that only declare, on to the module headers they include.
function reach(a, f, via,    i, t) {
	for (i = 1; i <= ninc[f]; i++) {
		t = inc[f, i]
		if (t in seen) continue
		seen[t] = 1
		if (module(t) in hasbody) edge(a, module(t), "includes " t via)
		else reach(a, t, via == "" ? " through " t : via)
	}
}
$1 == "include" { ninc[$2]++; inc[$2, ninc[$2]] = $3; file[$2] = 1; file[$3] = 1 }
$1 == "source" { hasbody[module($2)] = 1; file[$2] = 1 }
$1 == "def" { definer[$3] = module($2) }
$1 == "use" { uses[++nuse] = module($2) SUBSEP $3 }
END {
	for (f in file) if (module(f) in hasbody) { split("", seen); node[module(f)] = 1; reach(module(f), f, "") }
	for (i = 1; i <= nuse; i++) {
		split(uses[i], u, SUBSEP)
		if (u[2] in definer) edge(u[1], definer[u[2]], "uses " u[2])
	}
	if (dump) for (a in node) for (i = 1; i <= nout[a]; i++) printf "edge %s %s %s\n", a, out[a, i], why_of[a, out[a, i]]
	bad = 0
	for (a in node) {
		fa = folder(a)
		if (!(fa in floor)) { printf "%s: folder %s is on no floor (add it to FLOORS in scripts/check-layers.sh)\n", a, fa; bad = 1; continue }
		for (i = 1; i <= nout[a]; i++) {
			b = out[a, i]; fb = folder(b)
			if ((fb in floor) && floor[fb] > floor[fa]) {
				printf "%s -> %s: arrow runs up (%s is below %s): %s\n", a, b, fa, fb, why_of[a, b]; bad = 1
			}
		}
	}
	for (v in node) if (!(v in idx)) visit(v)
	while ((getline line < known) > 0) if (line !~ /^[[:space:]]*(#|$)/) { split(line, w, /[[:space:]]+/); listed[w[1]] = 1 }
	for (k = 1; k <= ncomp; k++) {
		if (size[k] < 2) continue
		members = ""; where = folder(root[k])
		for (v in comp) if (comp[v] == k) { members = members " " v; if (folder(v) != where) where = "" }
		if (where in listed) { printf "known (scripts/layers-known.txt): circle among%s\n", members; used[where] = 1; continue }
		printf "import circle among%s:\n%s", members, circle(root[k], k); bad = 1
	}
	for (f in listed) if (!(f in used)) { printf "scripts/layers-known.txt: %s has no circle left: take it off the list\n", f; bad = 1 }
	exit bad
}'
