#!/usr/bin/env bash
# Installs everything splitk-parity needs on a fresh Debian machine:
#   system: llvm-19 (opt-19 checks llvm20-flavor text), a comma-decimal locale
#           (de_DE.UTF-8, for the locale-independence test), lld-22 (ld.lld-22
#           links gfx1250 code objects for python_engine.runtime, docs/runtime.md)
#   python: the package itself, editable, with the [test] extra (pytest,
#           hypothesis, llvmlite 0.50 = LLVM 22.1 for the llvm22/llvm23 lanes,
#           PyYAML for the verify ISA report, pyelftools + msgpack for the runtime's
#           code-object reader)
# Safe to run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v opt-19 >/dev/null 2>&1 || need_apt+=(llvm-19)
command -v ld.lld-22 >/dev/null 2>&1 || need_apt+=(lld-22)
locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$' || need_apt+=(locales)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO sed -i 's/^# *de_DE.UTF-8 UTF-8/de_DE.UTF-8 UTF-8/' /etc/locale.gen
  $SUDO locale-gen >/dev/null
fi

python3 -m pip install -q --disable-pip-version-check -e ".[test]"
