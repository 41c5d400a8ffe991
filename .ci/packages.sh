#!/usr/bin/env bash
# CI's system packages beyond the README's bootstrap, in one apt transaction (one
# `apt-get update`) at the start of CI instead of one in the middle of a lane:
#   ccache      the C/C++ compiler cache: one Release compile of the C++ engine, reused by
#               the wheel and the CMake-only builds of scripts/check_install.sh (docs/ci.md)
#   fish, zsh   the shells tests/test_completion.py completes through (bash is always there)
#   whatever scripts/fuzz_c_api.sh --missing names (clang-19, libclang-rt-19-dev: libFuzzer
#               with ASan/UBSan for the C API fuzz lane)
# Nothing to do (no apt at all) when they are all there.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t need < <(bash scripts/fuzz_c_api.sh --missing)
command -v ccache >/dev/null 2>&1 || need+=(ccache)
# fish and zsh: tests/test_completion.py completes through each shell (`parity completion`).
command -v fish >/dev/null 2>&1 || need+=(fish)
command -v zsh >/dev/null 2>&1 || need+=(zsh)
if [ ${#need[@]} -eq 0 ]; then
  echo "packages: all there"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "packages: apt-get install ${need[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
