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
#     with its symlinks, cpp_engine.pc) and build examples/c_embed against that
#     prefix; install the example into the prefix, move the prefix and run it
#     (RUNPATH $ORIGIN/../lib, nothing pointing into a build tree);
#   - the same sources with -DBUILD_SHARED_LIBS=OFF (a static archive, same
#     target name): examples/c_embed with find_package and with
#     `cc main.c $(pkg-config --cflags --libs cpp_engine)`;
#   - pkg-config against the wheel's and the shared CMake install's .pc.
# Every example build prints the Python engine's bytes (one want file).
# The editable install's prefix (pkg-config, the libcpp_engine.so link) is
# tests/test_embed_pkg_config.py's.
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
        "cpp_engine/lib/pkgconfig/cpp_engine.pc",
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
# The bytes every example build must print: the Python engine's.
"$WORK/venv/bin/python" -c '
import sys, python_engine
sys.stdout.write(python_engine.lower("ir_core", {"kernel": "lds_barrier", "threads": 256}, "gfx1250", "llvm23").text)' \
  >"$WORK/want.ll"
# run_example BIN WHAT [ENV...]: BIN prints the Python engine's bytes, else exit 1.
run_example() {
  local bin="$1" what="$2"; shift 2
  env "$@" "$bin" >"$bin.out" 2>"$bin.err" && cmp -s "$bin.out" "$WORK/want.ll" \
    || { echo "c_embed ($what) printed other bytes or failed:"; tail -5 "$bin.err"; exit 1; }
}
# cmake_example NAME PREFIX: examples/c_embed configured and built with find_package(cpp_engine).
cmake_example() {
  cmake -S "$WORK/src/examples/c_embed" -B "$WORK/$1" -DCMAKE_PREFIX_PATH="$2" "${same[@]}" >"$WORK/$1.log" 2>&1 \
    && cmake --build "$WORK/$1" >>"$WORK/$1.log" 2>&1 || { tail -20 "$WORK/$1.log"; exit 1; }
}
# pc_example OUT PC_DIR: main.c built with cc and nothing but pkg-config's flags.
pc_example() {
  PKG_CONFIG_PATH="$2" pkg-config --exists cpp_engine || { echo "pkg-config finds no cpp_engine in $2"; exit 1; }
  cc -std=c99 -Wall -Wextra -Werror -o "$1" "$WORK/src/examples/c_embed/main.c" \
    $(PKG_CONFIG_PATH="$2" pkg-config --cflags --libs cpp_engine) || { echo "cc + pkg-config ($2) failed"; exit 1; }
}
# runpaths BIN: its RUNPATH/RPATH entries (empty when it has none).
runpaths() { readelf -d "$1" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p'; }
command -v pkg-config >/dev/null 2>&1 || { echo "pkg-config is not installed (bash scripts/bootstrap.sh installs it)"; exit 1; }

# The wheel's .pc (prefix: the installed cpp_engine package dir).
pc_example "$WORK/c_embed_wheel_pc" "$SITE/cpp_engine/lib/pkgconfig"
run_example "$WORK/c_embed_wheel_pc" "pkg-config, wheel" LD_LIBRARY_PATH="$SITE/cpp_engine"
say "wheel: cc main.c \$(pkg-config --cflags --libs cpp_engine) links and prints the Python engine's bytes"

CB="$WORK/src/build/cmake-only"
cmake -S "$WORK/src" -B "$CB" -DCMAKE_BUILD_TYPE=Release "${same[@]}" >"$WORK/cmake.log" 2>&1 \
  && cmake --build "$CB" -j 2 >>"$WORK/cmake.log" 2>&1 \
  && cmake --install "$CB" --prefix "$WORK/prefix" >>"$WORK/cmake.log" 2>&1 \
  || { tail -20 "$WORK/cmake.log"; exit 1; }
LIBDIR="$(dirname "$(find "$WORK/prefix" -name 'libcpp_engine.so.0.1.*' | head -1)")"
[ -L "$LIBDIR/libcpp_engine.so.0.1" ] && [ -L "$LIBDIR/libcpp_engine.so" ] \
  && [ -f "$WORK/prefix/include/cpp_engine/cpp_engine.h" ] && [ -f "$LIBDIR/cmake/cpp_engine/cpp_engineConfig.cmake" ] \
  && [ -f "$LIBDIR/pkgconfig/cpp_engine.pc" ] && [ -z "$(runpaths "$LIBDIR/libcpp_engine.so.0.1")" ] \
  || { echo "CMake install layout:"; find "$WORK/prefix" | head -30; exit 1; }
cmake_example c_embed "$WORK/prefix"
run_example "$WORK/c_embed/c_embed" "CMake, shared"
# Installed into the engine's prefix, the example finds the library through $ORIGIN
# wherever the prefix goes.
cmake --install "$WORK/c_embed" --prefix "$WORK/prefix" >>"$WORK/c_embed.log" 2>&1 || { tail -5 "$WORK/c_embed.log"; exit 1; }
rp="$(runpaths "$WORK/prefix/bin/c_embed")"
[ "$rp" = "\$ORIGIN/../$(basename "$LIBDIR")" ] || { echo "installed c_embed RUNPATH is '$rp'"; exit 1; }
mv "$WORK/prefix" "$WORK/prefix-moved"
run_example "$WORK/prefix-moved/bin/c_embed" "CMake, shared, installed, prefix moved"
pc_example "$WORK/c_embed_pc" "$WORK/prefix-moved/$(basename "$LIBDIR")/pkgconfig"
run_example "$WORK/c_embed_pc" "pkg-config, shared" LD_LIBRARY_PATH="$WORK/prefix-moved/$(basename "$LIBDIR")"
say "CMake-only install: $(cd "$WORK/prefix-moved" && find . -name 'libcpp_engine.so*' | sort | tr '\n' ' '); c_embed built against it (find_package; pkg-config) prints the Python engine's bytes; installed with RUNPATH $rp, it runs from a moved prefix"

# The static archive: the same objects (ccache hits), the same target name.
CS="$WORK/src/build/cmake-static"
cmake -S "$WORK/src" -B "$CS" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF "${same[@]}" >"$WORK/cmake-static.log" 2>&1 \
  && cmake --build "$CS" -j 2 >>"$WORK/cmake-static.log" 2>&1 \
  && cmake --install "$CS" --prefix "$WORK/prefix-static" >>"$WORK/cmake-static.log" 2>&1 \
  || { tail -20 "$WORK/cmake-static.log"; exit 1; }
SLIB="$(find "$WORK/prefix-static" -name 'libcpp_engine.a' | head -1)"
[ -n "$SLIB" ] && [ -z "$(find "$WORK/prefix-static" -name 'libcpp_engine.so*')" ] \
  || { echo "static install layout:"; find "$WORK/prefix-static" | head -30; exit 1; }
cmake_example c_embed_static "$WORK/prefix-static"
pc_example "$WORK/c_embed_static_pc" "$(dirname "$SLIB")/pkgconfig"
for b in "$WORK/c_embed_static/c_embed" "$WORK/c_embed_static_pc"; do
  ! readelf -d "$b" | grep -q 'libcpp_engine' || { echo "$b needs a shared libcpp_engine"; exit 1; }
  run_example "$b" "static: $b"
done
say "static install: lib/$(basename "$SLIB"); c_embed built against it (find_package; cc + pkg-config) is self-contained and prints the Python engine's bytes"
say "OK"
