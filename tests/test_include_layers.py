"""scripts/check_includes.py: every #include in cpp_engine/src points down the
layer order (spec < ir base < targets < ir build < kernels < policy < families
< api), and no include circle; a planted back-arrow or circle fails it."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "check_includes.py"
SRC = ROOT / "cpp_engine" / "src"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def copy_src(tmp_path: Path) -> Path:
    dst = tmp_path / "src"
    shutil.copytree(SRC, dst)
    return dst


def plant(path: Path, include: str) -> int:
    """Insert `#include "<include>"` after the file's last include; its line number."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if line.startswith("#include"))
    lines.insert(last + 1, f'#include "{include}"\n')
    path.write_text("".join(lines), encoding="utf-8")
    return last + 2


def test_real_tree_points_down():
    r = run()
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("check_includes: cpp_engine/src: "), r.stdout
    assert "no cycle" in out[0]


def test_back_arrow_from_targets_to_kernels(tmp_path):
    src = copy_src(tmp_path)
    line = plant(src / "targets" / "arch.cpp", "kernels/common.h")
    r = run(str(src))
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        f"{src}/targets/arch.cpp:{line}: includes kernels/common.h (layer 5 kernels) from layer 3 targets"
    ]


def test_kernels_may_not_reach_policy_and_same_layer_folders(tmp_path):
    src = copy_src(tmp_path)
    line = plant(src / "kernels" / "conv_launch.cpp", "policy/split_k.h")
    r = run(str(src))
    assert r.returncode == 1
    assert (f"{src}/kernels/conv_launch.cpp:{line}: includes policy/split_k.h (layer 6 policy) "
            f"from layer 5 kernels") in r.stdout.splitlines()


def test_ir_build_over_targets_over_ir_base(tmp_path):
    src = copy_src(tmp_path)
    line = plant(src / "ir" / "types.cpp", "ir/function.h")  # ir base -> ir build: up
    r = run(str(src))
    assert r.returncode == 1
    assert r.stdout.splitlines() == [
        f"{src}/ir/types.cpp:{line}: includes ir/function.h (layer 4 ir build) from layer 2 ir base"
    ]


def test_include_cycle(tmp_path):
    src = copy_src(tmp_path)
    (src / "kernels" / "loop_a.h").write_text('#pragma once\n#include "kernels/loop_b.h"\n')
    (src / "kernels" / "loop_b.h").write_text('#pragma once\n#include "kernels/loop_a.h"\n')
    r = run(str(src))
    assert r.returncode == 1
    assert r.stdout.splitlines() == [
        f"{src}/kernels/loop_a.h:1: include cycle: kernels/loop_a.h -> kernels/loop_b.h -> kernels/loop_a.h"
    ]


def test_stale_include_path(tmp_path):
    src = copy_src(tmp_path)
    line = plant(src / "policy" / "fold.cpp", "kernels/spec.h")
    r = run(str(src))
    assert r.returncode == 1
    assert r.stdout.splitlines() == [
        f"{src}/policy/fold.cpp:{line}: includes kernels/spec.h, which is not a file under {src}"
    ]


def test_relative_and_angle_bracket_back_arrows_fail(tmp_path):
    """`#include "../kernels/common.h"` and `#include <kernels/common.h>` compile
    (cpp_engine/src is on the include path) and are back-arrows like any other."""
    src = copy_src(tmp_path)
    path = src / "targets" / "arch.cpp"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if line.startswith("#include"))
    lines[last + 1:last + 1] = ['#include "../kernels/common.h"\n', "#include <kernels/common.h>\n",
                                '#include "../../outside.h"\n']
    path.write_text("".join(lines), encoding="utf-8")
    r = run(str(src))
    assert r.returncode == 1
    want = [f"{src}/targets/arch.cpp:{last + 2}: includes kernels/common.h (layer 5 kernels) from layer 3 targets",
            f"{src}/targets/arch.cpp:{last + 3}: includes kernels/common.h (layer 5 kernels) from layer 3 targets",
            f"{src}/targets/arch.cpp:{last + 4}: includes ../../outside.h, which leaves {src}"]
    assert [ln for ln in r.stdout.splitlines() if "arch.cpp" in ln] == want
