"""The compile cache (parity/llvm/compile_cache.py) and its use by every llvmlite
compile (parity/llvm_compile.compile_module) and by `parity verify`: hit and
miss, key sensitivity, concurrent writers, eviction, corrupt entries, the
switch that turns it off, and a broken module still refused."""
from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from parity.llvm import compile_cache as C
from verify_helpers import need_llvmlite

GOOD = """target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @k(ptr addrspace(1) %out) {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %id
  store i32 %id, ptr addrspace(1) %p, align 4
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cc"
    monkeypatch.setenv(C.ENV, str(d))
    monkeypatch.delenv(C.ENV_CAP, raising=False)
    return d


def _files(d: Path) -> list[Path]:
    return sorted(d.rglob("*.pcc")) if d.exists() else []


# --- the store itself -------------------------------------------------------------

def test_store_load_round_trip_and_miss(cache):
    k = C.key("object", "ir text", llvm="LLVM 22.1.0", cpu="gfx1250")
    assert C.load(k) is None
    C.store(k, {"triple": "amdgcn-amd-amdhsa", "defined": ["k"]}, b"\x7fELF-bytes")
    e = C.load(k)
    assert e.meta == {"triple": "amdgcn-amd-amdhsa", "defined": ["k"]} and e.data == b"\x7fELF-bytes"
    [f] = _files(cache)
    assert f.parent.name == k[:2] and f.name == k + ".pcc"


def test_key_depends_on_every_part():
    base = C.key("asm", "define void @f() { ret void }", llvm="LLVM 22.1.0 (llvmlite 0.50.0)", cpu="gfx1250",
                 opt=3, asm_comments=True)
    assert len(base) == 64 and base == C.key("asm", "define void @f() { ret void }",
                                             llvm="LLVM 22.1.0 (llvmlite 0.50.0)", cpu="gfx1250", opt=3,
                                             asm_comments=True)
    variants = [
        C.key("asm", "define void @f() { ret void } ", llvm="LLVM 22.1.0 (llvmlite 0.50.0)", cpu="gfx1250",
              opt=3, asm_comments=True),                                            # one IR byte
        C.key("asm", "define void @f() { ret void }", llvm="LLVM 22.1.1 (llvmlite 0.50.0)", cpu="gfx1250",
              opt=3, asm_comments=True),                                            # LLVM version
        C.key("asm", "define void @f() { ret void }", llvm="LLVM 22.1.0 (llvmlite 0.50.0)", cpu="gfx942",
              opt=3, asm_comments=True),                                            # CPU
        C.key("asm", "define void @f() { ret void }", llvm="LLVM 22.1.0 (llvmlite 0.50.0)", cpu="gfx1250",
              opt=2, asm_comments=True),                                            # -O level
        C.key("object", "define void @f() { ret void }", llvm="LLVM 22.1.0 (llvmlite 0.50.0)", cpu="gfx1250",
              opt=3, asm_comments=True),                                            # kind
    ]
    assert len(set(variants + [base])) == 6


@pytest.mark.parametrize("damage", ["flip", "truncate", "magic", "empty"])
def test_corrupt_entry_is_a_miss_and_deleted(cache, damage):
    k = C.key("object", "x")
    C.store(k, {"a": 1}, b"payload" * 100)
    [f] = _files(cache)
    raw = bytearray(f.read_bytes())
    if damage == "flip":
        raw[-10] ^= 0x01
    elif damage == "truncate":
        raw = raw[:len(raw) // 2]
    elif damage == "magic":
        raw[:4] = b"XXXX"
    else:
        raw = bytearray()
    f.write_bytes(bytes(raw))
    assert C.load(k) is None
    assert not f.exists()
    C.store(k, {"a": 1}, b"payload" * 100)
    assert C.load(k).data == b"payload" * 100


def test_off_switch_writes_nothing(tmp_path, monkeypatch):
    for v in ("off", "0", "none", "OFF"):
        monkeypatch.setenv(C.ENV, v)
        assert C.cache_dir() is None
        C.store(C.key("object", "x"), {}, b"y")
        assert C.load(C.key("object", "x")) is None
    monkeypatch.delenv(C.ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert C.cache_dir() == tmp_path / "xdg" / "splitk-parity" / "compile"
    C.disable()
    assert os.environ[C.ENV] == "off" and C.cache_dir() is None


def test_cap_variable_is_checked(monkeypatch):
    monkeypatch.setenv(C.ENV_CAP, "2")
    assert C.cap_bytes() == 2 << 20
    for bad in ("0", "-1", "lots"):
        monkeypatch.setenv(C.ENV_CAP, bad)
        with pytest.raises(ValueError, match="PARITY_COMPILE_CACHE_MB must be a positive number"):
            C.cap_bytes()


def test_eviction_drops_least_recently_used_first(cache):
    keys = [C.key("object", str(i)) for i in range(10)]
    for i, k in enumerate(keys):
        C.store(k, {}, bytes(1000))
        p = cache / k[:2] / (k + ".pcc")
        os.utime(p, (1_000_000 + i, 1_000_000 + i))   # entry i used at time i
    assert C.load(keys[0]) is not None                  # a hit makes the oldest the newest
    size = _files(cache)[0].stat().st_size
    removed = C.evict(cache, cap=5 * size)               # above the cap: down to 80 % of it (4 entries)
    assert removed == 6
    left = {p.stem for p in _files(cache)}
    assert left == {keys[0], keys[7], keys[8], keys[9]}
    assert C.evict(cache, cap=100 * size) == 0           # under the cap: nothing


def test_store_evicts_beyond_the_cap(cache, monkeypatch):
    monkeypatch.setenv(C.ENV_CAP, str(20_000 / (1 << 20)))   # 20 kB
    monkeypatch.setattr(C, "EVICT_EVERY", 1)
    for i in range(40):
        C.store(C.key("object", str(i)), {}, bytes(2000))
    total = sum(p.stat().st_size for p in _files(cache))
    assert 0 < total <= 20_000


def _writer(args):
    d, n, seed = args
    os.environ[C.ENV] = d
    for i in range(n):
        k = C.key("object", str(i % 7))                # 7 keys written by every process
        C.store(k, {"i": i % 7}, (str(i % 7) * 50_000).encode())
        e = C.load(k)
        assert e is not None and e.data == (str(i % 7) * 50_000).encode() and e.meta == {"i": i % 7}
    return seed


def test_concurrent_writers_leave_whole_entries(cache):
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        assert sorted(pool.map(_writer, [(str(cache), 40, s) for s in range(4)])) == [0, 1, 2, 3]
    files = _files(cache)
    assert len(files) == 7
    for f in files:
        e = C.decode(f.read_bytes())
        assert e is not None and e.data == (str(e.meta["i"]) * 50_000).encode()
    assert not [p for p in cache.rglob(".tmp-*")]      # no temporary file left behind


# --- every llvmlite compile goes through it ------------------------------------------

def test_compile_module_hit_miss_and_key_sensitivity(cache):
    need_llvmlite()
    from parity.llvm import compile as LC

    a = LC.compile_module(GOOD, "gfx1250", "asm")
    assert not a.cached and a.defined == ["k"] and a.externals == [] and ".amdgcn_target" in a.output
    b = LC.compile_module(GOOD, "gfx1250", "asm")
    assert b.cached and b.output == a.output and b.defined == ["k"] and b.triple == "amdgcn-amd-amdhsa"
    assert len(_files(cache)) == 1
    o = LC.compile_module(GOOD, "gfx1250", "object")                 # another mode: another entry
    assert not o.cached and o.output[:4] == b"\x7fELF" and len(_files(cache)) == 2
    assert LC.compile_module(GOOD, "gfx1250", "object").output == o.output
    assert not LC.compile_module(GOOD + "\n", "gfx1250", "asm").cached  # one IR byte
    assert not LC.compile_module(GOOD, "gfx1200", "asm").cached        # another CPU
    assert LC.compile_text(GOOD, "gfx1250", "asm") == a.output


def test_llvm_version_is_part_of_the_key(cache, monkeypatch):
    need_llvmlite()
    from parity.llvm import compile as LC

    LC.compile_module(GOOD, "gfx1250", "asm")
    assert LC.compile_module(GOOD, "gfx1250", "asm").cached
    monkeypatch.setattr(LC, "llvm_version", lambda: "23.0.0")
    assert not LC.compile_module(GOOD, "gfx1250", "asm").cached


def test_corrupt_compile_entry_is_recomputed(cache):
    need_llvmlite()
    from parity.llvm import compile as LC

    a = LC.compile_module(GOOD, "gfx1250", "object")
    [f] = _files(cache)
    raw = bytearray(f.read_bytes())
    raw[-1] ^= 0xFF
    f.write_bytes(bytes(raw))
    b = LC.compile_module(GOOD, "gfx1250", "object")
    assert not b.cached and b.output == a.output
    assert LC.compile_module(GOOD, "gfx1250", "object").cached


def test_a_broken_module_is_refused_with_a_full_cache(cache):
    need_llvmlite()
    from parity.llvm import compile as LC

    LC.compile_module(GOOD, "gfx1250", "asm")
    broken = GOOD.replace("store i32 %id, ptr addrspace(1) %p", "store i64 %id, ptr addrspace(1) %p")
    with pytest.raises(LC.CompileError) as exc:
        LC.compile_module(broken, "gfx1250", "asm")
    assert exc.value.stage == "parse" and "i64" in exc.value.message
    assert len(_files(cache)) == 1


def test_verify_job_from_the_cache_equals_the_cold_one(cache):
    """The compile worker's job (verify, layers, write) answers the same from a warm cache."""
    need_llvmlite()
    from parity.verify.compile_worker import CompileWorkers

    job = {"kind": "compile", "text": GOOD, "kernel": "k", "arch": "gfx1250"}
    cold, warm = CompileWorkers(workers=1).run([job]), CompileWorkers(workers=1).run([job])
    assert cold[0]["ok"] and not cold[0]["cached"] and warm[0]["cached"]
    assert cold[0]["report"] == warm[0]["report"] and cold[0]["elf"] is warm[0]["elf"] is True
    assert cold[0]["report"]["object_bytes"] > 0
    missing = CompileWorkers(workers=1).run([{**job, "kernel": "nope"}])[0]
    assert not missing["ok"] and missing["error"] == "module defines no function @nope"


def test_unknown_cpu_is_never_cached(cache):
    """LLVM only warns for a CPU it does not know (and compiles for a generic one):
    such a compile is not stored, so the warning verify fails on is never lost."""
    need_llvmlite()
    from parity.verify.compile_worker import CompileWorkers

    job = {"kind": "compile", "text": GOOD, "kernel": "k", "arch": "gfx9999"}
    for _ in range(2):
        [a] = CompileWorkers(workers=1).run([job])
        assert "not a recognized processor" in a.get("stderr", "") + a.get("error", "")
    assert not [f for f in _files(cache) if C.decode(f.read_bytes()).meta.get("triple")]


# --- the code object from the one compile ---------------------------------------------

def test_object_assembled_by_llvm_mc_or_compiled_without_it(cache, monkeypatch):
    """With llvm-mc-22 the object is assembled from the assembly; without it llvmlite
    compiles one: either way an AMDGPU ELF of a plausible size, and the same report."""
    need_llvmlite()
    from parity.verify.assemble import ENV, find_llvm_mc
    from parity.verify.compile_worker import CompileWorkers

    job = {"kind": "compile", "text": GOOD, "kernel": "k", "arch": "gfx1250"}
    monkeypatch.setenv(ENV, "/nonexistent/llvm-mc")
    [no_mc] = CompileWorkers(workers=1).run([job])
    assert no_mc["ok"] and no_mc["elf"] is True and no_mc["report"]["object_bytes"] > 1000
    monkeypatch.delenv(ENV)
    find_llvm_mc.cache_clear()
    if find_llvm_mc(22) is None:
        pytest.skip("no llvm-mc-22 (Debian llvm-22) on PATH: only the llvmlite fallback was checked")
    [mc] = CompileWorkers(workers=1).run([job])
    assert mc["ok"] and mc["elf"] is True and mc["report"]["object_bytes"] > 1000
    strip = lambda r: {k: v for k, v in r.items() if k != "object_bytes"}  # noqa: E731
    assert strip(mc["report"]) == strip(no_mc["report"])


def test_assembler_refusal_is_an_error_naming_the_line(cache):
    from parity.verify.assemble import AssembleError, assemble_facts, find_llvm_mc

    tool = find_llvm_mc(22)
    if tool is None:
        pytest.skip("no llvm-mc-22 (Debian llvm-22) on PATH")
    with pytest.raises(AssembleError, match="invalid instruction"):
        assemble_facts("\t.text\nk:\n\tv_no_such_instruction v0, v1\n", "amdgcn-amd-amdhsa", "gfx1250", tool)
    facts = assemble_facts("\t.text\nk:\n\ts_endpgm\n", "amdgcn-amd-amdhsa", "gfx1250", tool)
    assert facts["elf_machine"] == 224 and facts["bytes"] > 100
    assert len(_files(cache)) == 1   # the good one is kept, the refused one is not


def test_no_compile_cache_option_turns_it_off(cache, monkeypatch):
    import argparse

    from parity.cli.common import add_compile_cache_option

    p = argparse.ArgumentParser()
    add_compile_cache_option(p)
    assert p.parse_args([]).no_compile_cache is False and C.cache_dir() == cache
    monkeypatch.setenv(C.ENV, str(cache))   # restored after the test
    assert p.parse_args(["--no-compile-cache"]).no_compile_cache is True
    assert os.environ[C.ENV] == "off" and C.cache_dir() is None


@pytest.mark.parametrize("bad", ["inf", "nan", "1e400"])
def test_cap_variable_refuses_non_finite(monkeypatch, bad):
    # int(float('inf') * 2**20) raised OverflowError (not the ValueError naming the variable)
    monkeypatch.setenv(C.ENV_CAP, bad)
    with pytest.raises(ValueError, match="PARITY_COMPILE_CACHE_MB must be a positive number"):
        C.cap_bytes()


@pytest.mark.parametrize("command", ["verify", "perf", "layers", "aot"])
@pytest.mark.parametrize("setting", ["cap:abc", "cap:-5", "cap:0", "cap:inf", "dir:file"])
def test_bad_cache_settings_are_one_error_line_exit_2(tmp_path, monkeypatch, capsys, command, setting):
    # a bad PARITY_COMPILE_CACHE_MB used to fail every compile job in the workers
    # (verify: RED, exit 1, one FAIL line per module); a cache "directory" that is a
    # file was skipped in silence. Both are refused before any work, as usage errors.
    from parity.app.main import main

    kind, value = setting.split(":")
    monkeypatch.setenv(C.ENV, str(tmp_path / "cc"))
    monkeypatch.delenv(C.ENV_CAP, raising=False)
    if kind == "cap":
        monkeypatch.setenv(C.ENV_CAP, value)
    else:
        f = tmp_path / "a-file"
        f.write_text("x")
        monkeypatch.setenv(C.ENV, str(f))
    argv = [command] + (["--only", "nothing_such"] if command != "layers" else ["/nonexistent/catalog"])
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: PARITY_COMPILE_CACHE"), err
    assert not (tmp_path / "cc").exists()


def test_bad_cache_settings_do_not_matter_with_the_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv(C.ENV_CAP, "abc")
    monkeypatch.setenv(C.ENV, "off")
    assert C.settings_error() is None
    monkeypatch.setenv(C.ENV, str(tmp_path))
    assert "PARITY_COMPILE_CACHE_MB" in C.settings_error()


def test_a_relative_cache_dir_is_pinned_to_the_start_directory(tmp_path, monkeypatch):
    # a relative PARITY_COMPILE_CACHE was resolved wherever each process ran: a process
    # started in another directory (or after a chdir) made a second cache there
    start, elsewhere = tmp_path / "start", tmp_path / "elsewhere"
    start.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(start)
    monkeypatch.setenv(C.ENV, "rel/cc")
    assert C.pin() == start / "rel" / "cc" and os.environ[C.ENV] == str(start / "rel" / "cc")
    monkeypatch.chdir(elsewhere)
    assert C.cache_dir() == start / "rel" / "cc"
    assert C.pin() is None                     # absolute now: pinned once
    for v in ("off", "", "/abs/cc"):           # off, unset and absolute settings are left as given
        monkeypatch.setenv(C.ENV, v)
        assert C.pin() is None and os.environ[C.ENV] == v


def test_parity_pins_the_cache_dir_at_start(tmp_path, monkeypatch, capsys):
    from parity.app.main import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(C.ENV, "cc")
    monkeypatch.delenv(C.ENV_CAP, raising=False)
    assert main(["layers", "/nonexistent/catalog"]) == 2   # any command: the pin comes first
    capsys.readouterr()
    assert os.environ[C.ENV] == str(tmp_path / "cc")


@pytest.mark.parametrize("var", ["PARITY_COMPILE_CACHE", "XDG_CACHE_HOME"])
def test_a_cache_dir_under_a_file_is_a_bad_setting(tmp_path, monkeypatch, var):
    # XDG_CACHE_HOME=a-file (or PARITY_COMPILE_CACHE=a-file/sub): no directory can be made
    # there; the cache was skipped in silence and every compile redone
    f = tmp_path / "a-file"
    f.write_text("x")
    monkeypatch.delenv(C.ENV, raising=False)
    monkeypatch.delenv(C.ENV_CAP, raising=False)
    monkeypatch.setenv(var, str(f / "sub") if var == C.ENV else str(f))
    err = C.settings_error()
    assert err is not None and err.startswith(f"{var}: the compile cache ") and f"{f} is not a directory" in err
