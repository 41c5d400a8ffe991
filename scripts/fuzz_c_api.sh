#!/usr/bin/env bash
# The C API fuzz lane (issue 14, docs/fuzz.md): builds the C++ engine with
# AddressSanitizer + UndefinedBehaviorSanitizer and the libFuzzer harness
# cpp_engine/fuzz/c_api_fuzzer.c (CMake option CPP_ENGINE_FUZZ=ON, clang-19
# from Debian; installs clang-19, libclang-rt-19-dev and cmake through apt
# when missing), then fuzzes for SECONDS (default 30) with a corpus in
# build-fuzz/corpus. Exit 0 when the run ends clean; a crash, leak, sanitizer
# report or broken invariant leaves its input in build-fuzz/ and exits non-zero.
#   usage: scripts/fuzz_c_api.sh [SECONDS]
#          scripts/fuzz_c_api.sh --missing   (prints the apt packages it would install, one a
#                                             line; .ci/packages.sh installs them with the rest)
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v clang-19 >/dev/null 2>&1 || need_apt+=(clang-19)
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
ls /usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || need_apt+=(libclang-rt-19-dev)
if [ "${1:-}" = --missing ]; then
  [ ${#need_apt[@]} -eq 0 ] || printf '%s\n' "${need_apt[@]}"
  exit 0
fi
SECONDS_TO_RUN="${1:-30}"
case "$SECONDS_TO_RUN" in ''|*[!0-9]*) echo "error: SECONDS must be a positive integer, got '$SECONDS_TO_RUN'" >&2; exit 2;; esac
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

B=build-fuzz
cmake -S . -B "$B" -DCPP_ENGINE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 >/dev/null
cmake --build "$B" --target c_api_fuzzer -j "$(nproc)" >/dev/null
mkdir -p "$B/corpus"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
exec "$B/c_api_fuzzer" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -timeout=20 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$B/" "$B/corpus"
