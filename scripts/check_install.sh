#!/usr/bin/env bash
# Non-editable install check (docs/cli.md "Installing"): builds a wheel with
# `python -m build` from a clean copy of HEAD, installs it into a fresh virtual
# environment and checks what a user of the wheel relies on:
#   - the wheel holds the C library (versioned soname), the C headers and the
#     CMake package;
#   - `parity check` run inside the checkout is GREEN (the checkout's goldens
#     and configs, the installed engines: accepted by the foreign-engine rule,
#     docs/gate.md, because the wheel was built from this checkout's sources --
#     a clean HEAD; with uncommitted engine edits the check refuses, correctly);
#   - the engines import from any directory, the repository root included (the
#     source tree's cpp_engine/ has no built library: it loads the installed one);
#   - outside any checkout, `parity check` is one error line (exit 2);
#   - the C++ engine alone, with CMake and no Python (docs/cpp_engine.md):
#     configure, build, install into a prefix (GNU layout, versioned soname
#     with its symlinks) and build examples/c_embed against that prefix.
# Usage: bash scripts/check_install.sh [WORKDIR]   (default: a temp directory)
# Reuse (docs/ci.md): `python -m build` comes from $PY when it has it (the [test]
# extra installs it; else from a venv made for it), and the CMake-only build
# configures with the wheel build's compilers and generator in a tree beside
# it ($WORK/src/build/cmake-only), so that with a compiler cache (.ci/run sets
# ccache as CMAKE_<LANG>_COMPILER_LAUNCHER) it compiles nothing the wheel build
# did not already compile.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
PY="${PYTHON:-python3}"
WORK="${1:-$(mktemp -d)}"
mkdir -p "$WORK"
say() { echo "check_install: $*"; }

git -C "$ROOT" archive --format=tar --prefix=src/ HEAD | tar -x -C "$WORK"
BPY="$PY"
if ! "$PY" -c 'import build' >/dev/null 2>&1; then
  "$PY" -m venv "$WORK/buildenv"
  "$WORK/buildenv/bin/python" -m pip install -q --disable-pip-version-check build
  BPY="$WORK/buildenv/bin/python"
fi
"$BPY" -m build --wheel --outdir "$WORK/dist" "$WORK/src" >"$WORK/build.log" 2>&1 \
  || { tail -20 "$WORK/build.log"; exit 1; }
WHEEL="$(ls "$WORK"/dist/*.whl)"
say "built $(basename "$WHEEL")"
"$BPY" - "$WHEEL" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ["cpp_engine/libcpp_engine.so.0.1", "cpp_engine/include/cpp_engine/cpp_engine.h",
        "cpp_engine/include/cpp_engine/conv_launch.h", "cpp_engine/lib/cmake/cpp_engine/cpp_engineConfig.cmake",
        "cpp_engine/lib/cmake/cpp_engine/cpp_engineTargets.cmake", "cpp_engine/_libpath.py",
        "parity/configs/conv_launch.py", "parity/data/layers.txt"]
missing = [n for n in need if n not in names]
stray = [n for n in names if n.startswith("cpp_engine/src/") or n.startswith("golden/")]
if missing or stray:
    sys.exit(f"wheel: missing {missing}, stray {stray[:5]}")
print(f"check_install: wheel holds the library, {sum(n.endswith('.h') for n in names)} headers, the CMake package")
PY
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q --disable-pip-version-check "$WHEEL"
SITE="$("$WORK/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
soname="$(readelf -d "$SITE/cpp_engine/libcpp_engine.so.0.1" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')"
[ "$soname" = "libcpp_engine.so.0.1" ] || { echo "soname is '$soname'"; exit 1; }
say "installed; soname $soname"

cd "$ROOT"   # inside the checkout: its goldens and configs, the installed engines
"$WORK/venv/bin/parity" check >"$WORK/check.log" 2>&1 || { tail -20 "$WORK/check.log"; exit 1; }
say "parity check in the checkout: $(tail -1 "$WORK/check.log")"
[ ! -e "$SITE/golden" ] || { echo "site-packages/golden exists"; exit 1; }
for d in "$ROOT" "$ROOT/tests" "$WORK"; do
  (cd "$d" && "$WORK/venv/bin/python" -c '
import cpp_engine, python_engine
r = cpp_engine.lower("ir_core", {"kernel": "lds_barrier", "threads": 256}, "gfx1250", "llvm23")
assert r.text == python_engine.lower("ir_core", {"kernel": "lds_barrier", "threads": 256}, "gfx1250", "llvm23").text
print("check_install: engines import in", __import__("os").getcwd(), "->", cpp_engine.library_path())')
done
OUTSIDE="$(mktemp -d)"   # not under $WORK: .ci/run puts $WORK inside the checkout
cd "$OUTSIDE"
set +e
"$WORK/venv/bin/parity" check >"$WORK/out.log" 2>"$WORK/err.log"
rc=$?
set -e
[ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err.log")" -eq 1 ] && grep -q '^error: no splitk-parity checkout' "$WORK/err.log" \
  || { echo "outside a checkout: exit $rc"; cat "$WORK/err.log"; exit 1; }
say "outside a checkout: $(cat "$WORK/err.log")"
rmdir "$OUTSIDE"
cd "$WORK"

# The C++ engine alone: CMake only, no Python. Same compilers and generator as the
# wheel build (its CMakeCache), in a tree at the same depth, so a compiler cache hits.
same=()
WCACHE="$(ls "$WORK"/src/build/*/CMakeCache.txt 2>/dev/null | head -1)"
if [ -n "$WCACHE" ]; then
  for v in CMAKE_C_COMPILER CMAKE_CXX_COMPILER CMAKE_MAKE_PROGRAM; do
    val="$(sed -n "s/^$v:[A-Z]*=//p" "$WCACHE")"
    # the build frontend's isolated environment (and its ninja) may be gone: ninja on PATH then
    [ "$v" != CMAKE_MAKE_PROGRAM ] || [ -x "$val" ] || val="$(command -v "$(basename "$val")" || true)"
    [ -z "$val" ] || [ ! -x "$val" ] || same+=("-D$v=$val")
  done
  gen="$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$WCACHE")"
  [ -z "$gen" ] || [ ${#same[@]} -ne 3 ] || same+=(-G "$gen")
fi
CB="$WORK/src/build/cmake-only"
cmake -S "$WORK/src" -B "$CB" -DCMAKE_BUILD_TYPE=Release "${same[@]}" >"$WORK/cmake.log" 2>&1 \
  && cmake --build "$CB" -j 2 >>"$WORK/cmake.log" 2>&1 \
  && cmake --install "$CB" --prefix "$WORK/prefix" >>"$WORK/cmake.log" 2>&1 \
  || { tail -20 "$WORK/cmake.log"; exit 1; }
LIBDIR="$(dirname "$(find "$WORK/prefix" -name 'libcpp_engine.so.0.1.*' | head -1)")"
[ -L "$LIBDIR/libcpp_engine.so.0.1" ] && [ -L "$LIBDIR/libcpp_engine.so" ] \
  && [ -f "$WORK/prefix/include/cpp_engine/cpp_engine.h" ] && [ -f "$LIBDIR/cmake/cpp_engine/cpp_engineConfig.cmake" ] \
  || { echo "CMake install layout:"; find "$WORK/prefix" | head -30; exit 1; }
cmake -S "$WORK/src/examples/c_embed" -B "$WORK/c_embed" -DCMAKE_PREFIX_PATH="$WORK/prefix" >"$WORK/c_embed.log" 2>&1 \
  && cmake --build "$WORK/c_embed" >>"$WORK/c_embed.log" 2>&1 || { tail -20 "$WORK/c_embed.log"; exit 1; }
"$WORK/c_embed/c_embed" >"$WORK/c_embed.out" 2>/dev/null
"$WORK/venv/bin/python" -c '
import sys, python_engine
want = python_engine.lower("ir_core", {"kernel": "lds_barrier", "threads": 256}, "gfx1250", "llvm23").text
sys.exit(0 if open(sys.argv[1]).read() == want else "c_embed against the CMake install printed other bytes")' "$WORK/c_embed.out"
say "CMake-only install: $(cd "$WORK/prefix" && find . -name 'libcpp_engine.so*' | sort | tr '\n' ' '); c_embed built against it prints the Python engine's bytes"
say "OK"
