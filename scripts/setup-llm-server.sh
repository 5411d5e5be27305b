#!/usr/bin/env bash
# setup-llm-server.sh - install a real OpenAI-compatible model server for
# tests/llm_real_server.sh: llama.cpp's server through llama-cpp-python (built
# from source by pip; about 6 minutes on 2 cores), plus the `gguf` writer and
# the `tokenizers` trainer that make the tiny random-weight test model.
#
# Everything goes into a virtual environment under the cache folder
# (CUCO_LLM_CACHE, default ~/.cache/cuco-llm), so a second run finds it and
# returns at once. Prints the venv's python on the last line.
#
#   bash scripts/setup-llm-server.sh          install (or reuse) the server
#   bash scripts/setup-llm-server.sh --check  exit 0 when installed, 1 when not
set -eu

CACHE=${CUCO_LLM_CACHE:-${HOME:-/tmp}/.cache/cuco-llm}
VENV=$CACHE/venv
PY=$VENV/bin/python
# Tested versions; a change here rebuilds the venv.
LLAMA_CPP_PYTHON=0.3.36
GGUF=0.19.0
TOKENIZERS=0.23.3
STAMP="llama-cpp-python==$LLAMA_CPP_PYTHON gguf==$GGUF tokenizers==$TOKENIZERS"

installed() {
	[ -x "$PY" ] && [ -f "$VENV/.cuco-stamp" ] && [ "$(cat "$VENV/.cuco-stamp")" = "$STAMP" ] &&
		"$PY" -c 'import llama_cpp.server, gguf, tokenizers, numpy' 2>/dev/null
}

if [ "${1:-}" = "--check" ]; then
	installed && echo "$PY" && exit 0
	exit 1
fi
if installed; then
	echo "setup-llm-server: already installed in $VENV"
	echo "$PY"
	exit 0
fi

for tool in python3 cmake c++ make; do
	if ! command -v "$tool" >/dev/null; then
		echo "setup-llm-server: $tool is needed to build llama.cpp (scripts/setup-deps.sh" \
			"installs cmake and a compiler)" >&2
		exit 1
	fi
done
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
	echo "setup-llm-server: python3 cannot make a virtual environment; install python3-venv" >&2
	exit 1
fi

mkdir -p "$CACHE"
rm -rf "$VENV"
start=$(date +%s)
python3 -m venv "$VENV"
"$PY" -m pip install --quiet --upgrade pip
# llama.cpp for this CPU only, without the parts the server does not use.
export CMAKE_ARGS="${CMAKE_ARGS:-} -DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAVA_BUILD=OFF \
-DLLAMA_BUILD_EXAMPLES=OFF -DGGML_OPENMP=OFF"
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}
echo "setup-llm-server: building llama-cpp-python $LLAMA_CPP_PYTHON into $VENV" \
	"(several minutes)"
"$PY" -m pip install --quiet --no-cache-dir "llama-cpp-python[server]==$LLAMA_CPP_PYTHON" \
	"gguf==$GGUF" "tokenizers==$TOKENIZERS" numpy
"$PY" -c 'import llama_cpp.server, gguf, tokenizers, numpy'
echo "$STAMP" >"$VENV/.cuco-stamp"
echo "setup-llm-server: installed in $(($(date +%s) - start)) s"
echo "$PY"
