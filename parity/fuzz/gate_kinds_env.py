"""``parity fuzz --gate`` kinds, part 2: the golden directory as a whole, the
file system under it, command lines, environments, config packages, the merge
driver's sides and catalog files (docs/fuzz.md lists every kind)."""
from __future__ import annotations

import json
import os
import uuid

from parity.fuzz import gate_env
from parity.fuzz.gate_case import fsname, GREEN, RED, REFUSED, Case, Kind, SkipKind
from parity.fuzz.gate_kinds_shard import BOTH, _changed

ALL3 = ("check", "write", "list")


# -- the golden directory and its file system ---------------------------------------------------

def _golden_dir(kind):
    def make(case: Case):
        case.golden_arg = False
        if kind == "missing":
            target = case.dir / "no_such_dir"
        elif kind == "file":
            target = case.dir / "a_file"
            target.write_text("x")
        elif kind == "fifo":
            target = case.dir / "a_fifo"
            os.mkfifo(target)
        elif kind == "non_utf8":
            target = os.fsdecode(os.fsencode(case.dir) + b"/g\xff\nFORGED")
        else:
            raise AssertionError(kind)
        case.extra += ["--golden-dir", str(target)]
    return make


def _hostile_golden_dir(case: Case):
    name = ("g" + case.hostile()).replace("/", "_").replace("\x00", "")
    target = os.path.join(os.fsencode(case.dir), fsname(name))
    os.rename(os.fsencode(case.golden), target)
    case.golden = case.dir / os.fsdecode(fsname(name))


def _mode(mode):
    def make(case: Case):
        _changed(case)
        os.chmod(case.golden, mode)
        case.preexec.append(gate_env.drop_capabilities)
        case.cleanup.append(lambda: os.chmod(case.golden, 0o755))
    return make


def _tmpfs(state):
    def make(case: Case):
        where = case.dir / "fs"
        if not gate_env.mount_tmpfs(where, "256k"):
            raise SkipKind("cannot mount a tmpfs (needs root); RLIMIT_FSIZE covers the refused write")
        case.cleanup.append(lambda: gate_env.umount(where))
        gdir = where / "golden"
        gdir.mkdir()
        for p in case.golden.iterdir():
            (gdir / p.name).write_bytes(p.read_bytes())
        case.golden = gdir
        _changed(case)
        if state == "full":
            gate_env.fill(where)
        elif not gate_env.remount(where, "ro"):
            raise SkipKind("cannot remount the tmpfs read-only")
    return make


def _rlimit(case: Case):
    _changed(case)
    case.preexec.append(gate_env.limit_file_size(64))


# -- command lines -----------------------------------------------------------------------------

def _opt(*args):
    """Extra options; a callable item gets the case (for a hostile text)."""
    def make(case: Case):
        case.extra += [a(case) if callable(a) else a for a in args]
    return make


def _json_into(where):
    def make(case: Case):
        if where == "directory":
            target = case.dir
        elif where == "missing_parent":
            target = case.dir / "nope" / "r.json"
        elif where == "hostile_parent":
            target = case.dir / os.fsdecode(fsname("j" + case.hostile())) / "r.json"
        elif where == "file_size_limit":
            target = case.dir / "r.json"
            case.preexec.append(gate_env.limit_file_size(64))
        elif where == "full_fs":
            fs = case.dir / "jfs"
            if not gate_env.mount_tmpfs(fs, "64k"):
                raise SkipKind("cannot mount a tmpfs (needs root); cli_json_file_size_limit covers it")
            case.cleanup.append(lambda: gate_env.umount(fs))
            gate_env.fill(fs)
            target = fs / "r.json"
        else:  # unwritable
            d = case.dir / "ro"
            d.mkdir()
            os.chmod(d, 0o555)
            case.preexec.append(gate_env.drop_capabilities)
            target = d / "r.json"
        case.extra += ["--json", str(target)]
    return make


def _show(ref, *more):
    def make(case: Case):
        case.extra += [a(case) if callable(a) else a for a in (ref, *more)]
    return make


def _raw(*args):
    def make(case: Case):
        case.raw = [a(case) if callable(a) else a for a in args]
    return make


# -- environments ------------------------------------------------------------------------------

def _env(fresh=False, **kv):
    def make(case: Case):
        _hostile_orphan(case)
        case.env.update(kv)
        case.fresh = fresh
    return make


def _hostile_orphan(case: Case):
    name = os.fsdecode(fsname("x\u00e9\u4e2d" + case.hostile_utf8()))  # a valid shard: RED, not refused
    path = os.path.join(os.fsencode(case.golden), fsname(name) + b".json")
    with open(path, "wb") as f:
        f.write(json.dumps({"family": name, "format": 2}).encode())


def _ci(case: Case):
    case.env["CI"] = "true"


def _cwd_deleted(case: Case):
    gone = case.dir / "cwd_gone"
    gone.mkdir()
    case.cwd = gone
    case.preexec.append(lambda: os.rmdir(gone))


def _umask(case: Case):
    _changed(case)
    case.preexec.append(lambda: os.umask(0o777))


# -- config packages ---------------------------------------------------------------------------

def _configs(body):
    def make(case: Case):
        pkg = f"gate_hostile_{uuid.uuid4().hex[:10]}"
        d = case.dir / "pkgs" / pkg
        d.mkdir(parents=True)
        (d / "__init__.py").write_text("")
        src = body(case) if callable(body) else body
        (d / "fam_a.py").write_text("from parity.config import Config, ok, reject\n" + src, encoding="utf-8",
                                    errors="surrogateescape")
        case.sys_path.insert(0, str(case.dir / "pkgs"))
        case.env["PYTHONPATH"] = os.pathsep.join([str(case.dir / "pkgs"), case.env.get("PYTHONPATH", "")])
        i = case.world.common.index("--configs")
        case.common = [*case.world.common[:i + 1], pkg, *case.world.common[i + 2:]]
    return make


def _cfg_with(line):
    return _configs(lambda c: f'FAMILY = "fam_a"\nCONFIGS = [{line(c) if callable(line) else line}]\n')


# -- merge driver ------------------------------------------------------------------------------

#: Issue 39's merge sides: what ``theirs`` holds (from the valid shard's bytes).
_MERGE_SIDE_BYTES = {
    "surrogate_escape": lambda v: v.replace(b"fam_a_plain", b"fam_a_\\ud800", 1),
    "surrogate_escape_low": lambda v: v.replace(b"fam_a_plain", b"fam_a_\\uDFFF", 1),
    "surrogate_in_key": lambda v: v.replace(b'"llvm23/plain"', b'"llvm23/p\\udc80"', 1),
    "deep_200k": lambda v: b"[" * 200_000 + b"]" * 200_000,
    "deep_past_cap": lambda v: b'{"family": "fam_a", "format": 2, "x": ' + b"[" * 17 + b"]" * 17 + b"}\n",
    "crlf": lambda v: v.replace(b"\n", b"\r\n"),
    "mixed_line_ends": lambda v: v.replace(b"\n", b"\r\n", 1),
    "bom": lambda v: b"\xef\xbb\xbf" + v,
}


def _merge(side_kind):
    def make(case: Case):
        valid = case.shard.read_bytes()
        base, ours, theirs = (case.golden / n for n in ("base.json", "ours.json", "theirs.json"))
        for p in (base, ours, theirs):
            p.write_bytes(valid)
        path_arg = "golden/fam_a.json"
        bad = theirs
        if side_kind == "directory":
            bad.unlink()
            bad.mkdir()
        elif side_kind == "fifo":
            bad.unlink()
            os.mkfifo(bad)
        elif side_kind == "non_utf8":
            bad.write_bytes(valid.replace(b"plain", b"pl\xffin", 1))
        elif side_kind == "hostile_key":
            bad.write_bytes(valid.replace(b'"llvm23/plain"', ('"llvm23/p' + case.hostile().encode(
                "unicode_escape").decode() + '"').encode(), 1))
        elif side_kind in _MERGE_SIDE_BYTES:  # issue 39: surrogate escapes, depth, line ends
            bad.write_bytes(_MERGE_SIDE_BYTES[side_kind](valid))
        elif side_kind == "sparse":
            with open(bad, "r+b") as f:
                f.truncate(10 * 2**30)
        elif side_kind == "conflict_hostile_path":
            ours.write_bytes(valid.replace(b"fam_a_plain", b"fam_a_ours"))
            theirs.write_bytes(valid.replace(b"fam_a_plain", b"fam_a_theirs"))
            path_arg = "golden/fam_a" + case.hostile() + ".json"
        elif side_kind == "ours_unwritable":
            ours.write_bytes(valid.replace(b"fam_a_plain", b"fam_a_ours"))
            os.chmod(ours, 0o444)
            os.chmod(case.golden, 0o555)
            case.preexec.append(gate_env.drop_capabilities)
            case.cleanup.append(lambda: os.chmod(case.golden, 0o755))
        case.raw = ["merge-golden", str(base), str(ours), str(theirs), path_arg]
        case.cwd = case.dir
    return make


# -- catalogs (the input-robust branch's side of issue 24) --------------------------------------

def _catalog(kind, command="layers"):
    def make(case: Case):
        p = case.dir / "catalog.txt"
        line = b"./bin/MIOpenDriver convbfp16 -n 1 -c 64 -H 14 -W 14 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -F 1\n"
        if kind == "non_utf8":
            p.write_bytes(line.replace(b"-F 1", b"-F 1 -Z \xff"))
        elif kind == "fifo":
            os.mkfifo(p)
        elif kind == "dev_zero":
            p.symlink_to("/dev/zero")
        elif kind == "directory":
            p.mkdir()
        elif kind == "sparse":
            with open(p, "wb") as f:
                f.truncate(4 * 2**30)
        elif kind == "line_separator":
            p.write_bytes(line.replace(b"-F 1", "-F 1\u2028FORGED".encode()))
        elif kind == "hostile_name":
            p = case.dir / os.fsdecode(fsname("cat" + case.hostile()))
            p.write_bytes(b"garbage\n")
        case.raw = ([command, str(p), "--flavor", "llvm23", "-j", "1"] if command == "layers"
                    else [command, "--catalog", str(p), "--out", str(case.dir / "out")])
    return make


KINDS = [
    Kind("golden_dir_missing", "golden_dir", _golden_dir("missing"), BOTH, REFUSED),
    Kind("golden_dir_is_file", "golden_dir", _golden_dir("file"), BOTH, REFUSED),
    Kind("golden_dir_is_fifo", "golden_dir", _golden_dir("fifo"), BOTH, REFUSED),
    Kind("golden_dir_non_utf8_missing", "golden_dir", _golden_dir("non_utf8"), BOTH, REFUSED),
    Kind("golden_dir_hostile_name", "golden_dir", _hostile_golden_dir, BOTH, {"check": GREEN, "write": GREEN}),
    Kind("golden_dir_mode_555", "golden_dir", _mode(0o555), BOTH, {"check": RED, "write": REFUSED}),
    Kind("golden_dir_mode_000", "golden_dir", _mode(0o000), BOTH, REFUSED),
    Kind("fs_full", "fs", _tmpfs("full"), BOTH, {"check": RED, "write": REFUSED}),
    Kind("fs_read_only", "fs", _tmpfs("ro"), BOTH, {"check": RED, "write": REFUSED}),
    Kind("fs_file_size_limit", "fs", _rlimit, ("write",), REFUSED),
    # command lines
    Kind("cli_only_hostile_family", "cli", _opt("--only", lambda c: "fam_a" + c.hostile()), ALL3, REFUSED),
    Kind("cli_only_hostile_config", "cli", _opt("--only", lambda c: "fam_a/x" + c.hostile()), ALL3, REFUSED),
    Kind("cli_only_lone_surrogate", "cli", _opt("--only", "fam_a/\udcff"), ALL3, REFUSED),
    Kind("cli_only_empty", "cli", _opt("--only", ""), ALL3, REFUSED),
    Kind("cli_only_commas", "cli", _opt("--only", ",,,"), ALL3, REFUSED),
    Kind("cli_only_slash_end", "cli", _opt("--only", "fam_a/"), ALL3, REFUSED),
    Kind("cli_only_three_parts", "cli", _opt("--only", "fam_a/b/c"), ALL3, REFUSED),
    Kind("cli_flavor_hostile", "cli", _opt("--flavor", lambda c: "llvm23" + c.hostile()), ALL3, REFUSED),
    Kind("cli_flavor_empty", "cli", _opt("--flavor", ""), ALL3, REFUSED),
    Kind("cli_jobs_zero", "cli", _opt("-j", "0"), ALL3, REFUSED),
    Kind("cli_jobs_negative", "cli", _opt("-j", "-3"), ALL3, REFUSED),
    Kind("cli_jobs_non_ascii_digit", "cli", _opt("-j", "\u0663"), ALL3, REFUSED, depends="input-robust"),
    Kind("cli_jobs_hostile", "cli", _opt("-j", lambda c: "2" + c.hostile()), ALL3, REFUSED),
    Kind("cli_timeout_nan", "cli", _opt("--timeout", "nan"), ALL3, REFUSED),
    Kind("cli_timeout_inf", "cli", _opt("--timeout", "inf"), ALL3, REFUSED),
    Kind("cli_timeout_negative", "cli", _opt("--timeout", "-1"), ALL3, REFUSED),
    Kind("cli_timeout_hostile", "cli", _opt("--timeout", lambda c: "1" + c.hostile()), ALL3, REFUSED),
    Kind("cli_json_directory", "cli", _json_into("directory"), ALL3, REFUSED),
    Kind("cli_json_missing_parent", "cli", _json_into("missing_parent"), ALL3, REFUSED),
    Kind("cli_json_hostile_parent", "cli", _json_into("hostile_parent"), ALL3, REFUSED),
    Kind("cli_json_unwritable", "cli", _json_into("unwritable"), ALL3, REFUSED),
    Kind("cli_json_file_size_limit", "cli", _json_into("file_size_limit"), ("check", "list"), REFUSED),
    Kind("cli_json_full_fs", "cli", _json_into("full_fs"), ("check", "list"), REFUSED),
    Kind("cli_unknown_option_hostile", "cli", _opt(lambda c: "--x" + c.hostile()), ALL3, REFUSED),
    Kind("cli_lock_timeout_nan", "cli", _opt("--lock-timeout", "nan"), ("write",), REFUSED),
    Kind("cli_lock_timeout_zero", "cli", _opt("--lock-timeout", "0"), ("write",), REFUSED),
    Kind("cli_show_hostile_ref", "cli", _show(lambda c: "fam_a/x" + c.hostile()), ("show",), REFUSED),
    Kind("cli_show_hostile_family", "cli", _show(lambda c: "x" + c.hostile() + "/y"), ("show",), REFUSED),
    Kind("cli_show_no_slash", "cli", _show("fam_a"), ("show",), REFUSED),
    Kind("cli_show_rejected", "cli", _show("fam_a/must_reject"), ("show",), RED),
    Kind("cli_show_ok", "cli", _show("fam_a/plain"), ("show",), GREEN),
    Kind("cli_diff_hostile_ref", "cli", _show(lambda c: "fam_a/x" + c.hostile()), ("diff",), REFUSED),
    Kind("cli_diff_hostile_flavor", "cli", _show("fam_a/plain", "--flavor", lambda c: "x" + c.hostile()),
         ("diff",), REFUSED),
    Kind("cli_diff_identical", "cli", _show("fam_a/plain"), ("diff",), GREEN),
    Kind("cli_show_hostile_engine", "cli", _raw("show", "fam_a/plain", "--engine", lambda c: "e" + c.hostile()),
         ("show",), REFUSED),
    Kind("cli_unknown_command_hostile", "cli", _raw(lambda c: "chek" + c.hostile()), ("check",), REFUSED),
    # environments
    Kind("env_ci_set", "env", _ci, ("write",), REFUSED),
    Kind("env_ioencoding_ascii", "env", _env(fresh=True, PYTHONIOENCODING="ascii"), ("check",), RED),
    Kind("env_ioencoding_latin1", "env", _env(fresh=True, PYTHONIOENCODING="latin-1"), ("check",), RED),
    # under an ASCII locale the non-ASCII file name decodes to escapes and no longer matches the
    # family inside: RED (orphan) or refused (family mismatch), both one clean verdict
    Kind("env_locale_c", "env", _env(fresh=True, LC_ALL="C", LANG="C", PYTHONUTF8="0"), ("check",),
         frozenset({1, 2})),
    Kind("env_home_unset", "env", lambda c: c.env.pop("HOME", None), ("check",), GREEN),
    Kind("env_cwd_deleted", "env", _cwd_deleted, BOTH, REFUSED),
    Kind("env_umask_777", "env", _umask, ("write",), GREEN),
    # config packages
    Kind("config_name_hostile", "config", _cfg_with(lambda c: f'Config({("x" + c.hostile())!r}, arch="gfx1250")'),
         ALL3, REFUSED),
    Kind("config_family_hostile", "config",
         _configs(lambda c: f'FAMILY = {("fam" + c.hostile())!r}\nCONFIGS = []\n'), ALL3, REFUSED),
    Kind("config_import_raises_hostile", "config",
         _configs(lambda c: f'raise RuntimeError({("boom" + c.hostile())!r})\n'), ALL3, REFUSED),
    Kind("config_syntax_error", "config", _configs("FAMILY = (\n"), ALL3, REFUSED),
    Kind("config_duplicate_names", "config",
         _cfg_with('Config("a", arch="gfx1250"), Config("a", arch="gfx1250")'), ALL3, REFUSED),
    Kind("config_not_a_config", "config", _cfg_with('"a"'), ALL3, REFUSED),
    Kind("config_arch_hostile", "config",
         _cfg_with(lambda c: f'Config("a", arch={("gfx1250" + c.hostile())!r}, spec={{"kernel": "a"}})'),
         ALL3, {"check": RED, "write": RED, "list": RED}),  # a refused write on failing verdicts exits 1
    Kind("config_reason_hostile", "config",
         _cfg_with(lambda c: f'Config("ok", arch="gfx1250", spec={{"kernel": "ok"}}), '
                             f'Config("r", arch="gfx1250", spec={{"reject": {("r" + c.hostile())!r}}}, '
                             f'expect=reject({("r" + c.hostile())!r}))'),
         ALL3, {"check": RED, "write": frozenset({0, 1}), "list": frozenset({0, 1})}),
    Kind("config_spec_key_hostile", "config",
         _cfg_with(lambda c: f'Config("a", arch="gfx1250", spec={{{("k" + c.hostile())!r}: 1, "kernel": "a"}})'),
         ALL3, {"check": RED, "write": GREEN, "list": GREEN}),
    Kind("config_package_missing", "config", _opt("--configs", "no_such_pkg_xyz"), ALL3, REFUSED),
    # the merge driver
    Kind("merge_side_directory", "merge", _merge("directory"), ("merge-golden",), REFUSED),
    Kind("merge_side_fifo", "merge", _merge("fifo"), ("merge-golden",), REFUSED),
    Kind("merge_side_non_utf8", "merge", _merge("non_utf8"), ("merge-golden",), REFUSED),
    Kind("merge_side_hostile_key", "merge", _merge("hostile_key"), ("merge-golden",), REFUSED),
    Kind("merge_side_sparse_10_gib", "merge", _merge("sparse"), ("merge-golden",), REFUSED),
    # a side CRLF on every line is read as LF (issue 39); mixed line ends and the rest are refused
    *(Kind(f"merge_side_{k}", "merge", _merge(k), ("merge-golden",), GREEN if k == "crlf" else REFUSED)
      for k in _MERGE_SIDE_BYTES),
    Kind("merge_conflict_hostile_path", "merge", _merge("conflict_hostile_path"), ("merge-golden",), RED),
    Kind("merge_ours_unwritable", "merge", _merge("ours_unwritable"), ("merge-golden",), REFUSED),
    # catalogs: `parity layers FILE` / `parity emit --catalog FILE` (engine/catalog side: input-robust)
    Kind("catalog_non_utf8", "catalog", _catalog("non_utf8"), ("layers",), REFUSED, 30.0, "input-robust"),
    Kind("catalog_fifo", "catalog", _catalog("fifo"), ("layers",), REFUSED, 20.0, "input-robust"),
    Kind("catalog_dev_zero", "catalog", _catalog("dev_zero"), ("layers",), REFUSED, 20.0, "input-robust"),
    Kind("catalog_directory", "catalog", _catalog("directory"), ("layers",), REFUSED, 20.0, "input-robust"),
    Kind("catalog_sparse_4_gib", "catalog", _catalog("sparse"), ("layers",), REFUSED, 20.0, "input-robust"),
    Kind("catalog_line_separator", "catalog", _catalog("line_separator"), ("layers",), REFUSED, 30.0,
         "input-robust"),
    Kind("catalog_hostile_name", "catalog", _catalog("hostile_name"), ("layers",), REFUSED, 30.0, "input-robust"),
    Kind("catalog_emit_fifo", "catalog", _catalog("fifo", "emit"), ("emit",), REFUSED, 20.0, "input-robust"),
    Kind("catalog_emit_non_utf8", "catalog", _catalog("non_utf8", "emit"), ("emit",), REFUSED, 30.0,
         "input-robust"),
]
