"""``parity fuzz --gate`` kinds, part 3 (issue 39): Ctrl-C at sampled points of each
command, pending files and catalogs at scale and with hostile line ends, pending files
in read-only and full directories, and concurrent writers on one golden directory
(docs/fuzz.md lists every kind).

A kind here may carry a ``post`` check (:class:`parity.fuzz.gate_case.Kind`): what
must hold after the command besides the exit status and the output lines -- after
Ctrl-C one ``error:`` line, every shard still parsing and no temp file left; after
concurrent writers, a golden directory that one serial order of the two commands
gives (no lost entry)."""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from parity.fuzz import gate_env
from parity.fuzz.gate_case import GREEN, RED, REFUSED, Case, Kind, SkipKind
from parity.fuzz.gate_kinds_shard import _changed
from parity.golden import pending as P
from parity.golden import shards as G

#: The checkout the lane runs from: review needs one (its old IR comes from --base) and its
#: real golden shards and configs.
ROOT = Path(__file__).resolve().parents[2]
INTERRUPTED = frozenset({130})
LAYER = "MIOpenDriver convbfp16 -n 1 -c 64 -H 8 -W 8 -k 64 -y 3 -x 3 -p 1 -q 1"
LAYER_B = "MIOpenDriver convbfp16 -n 1 -c 64 -H 8 -W 8 -k 64 -y 1 -x 1"
_LAYERS_FAST = ["--flavor", "llvm23", "--no-verify", "--no-numerics", "-j", "1"]


# -- post checks ------------------------------------------------------------------------------

def _stderr_errors(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.strip() and not ln.startswith(("parity: golden", "note: "))]


def _shards_parse(golden: Path) -> str | None:
    for p in sorted(golden.glob("*.json")):
        try:
            data = G.read_regular_file(p)
            G.parse_shard(data, p.name, p.stem)
        except G.GoldenError as exc:
            return f"after the command a shard no longer parses: {exc}"
    return None


def _temps(*dirs: Path) -> list[str]:
    return sorted(p.name for d in dirs if d.is_dir() for p in d.iterdir() if p.name.endswith(".tmp"))


def _after_interrupt(case: Case, status, out: str, err: str) -> str | None:
    """Ctrl-C: one ``error:`` line (exit 130), shards that parse, no temp file left."""
    if status == 130:
        lines = _stderr_errors(err)
        if len(lines) != 1 or not lines[0].startswith("error: "):
            return f"exit 130 with {len(lines)} stderr line(s): {err[-300:]!r}"
    left = _temps(case.golden, case.dir)
    if left:
        return f"temp file(s) left after Ctrl-C: {left[:3]}"
    return _shards_parse(case.golden)


# -- Ctrl-C at a sampled point ----------------------------------------------------------------

def _sigint_after(delay: float):
    """A preexec step: a helper process in the command's process group sends the group
    SIGINT (a terminal's Ctrl-C) ``delay`` seconds later. The command starts with SIGINT
    handled, as from a terminal: a lane started as a background job (``parity fuzz &``,
    ``nohup``) ignores SIGINT and its children inherit that, so every Ctrl-C kind passed
    without one Ctrl-C arriving (a forked run gets Python's handler, a fresh interpreter
    the default action, which Python replaces with its own)."""
    def arm():
        signal.signal(signal.SIGINT, signal.default_int_handler)
        pgid = os.getpgrp()
        if os.fork() == 0:
            try:
                time.sleep(delay)
                os.killpg(pgid, signal.SIGINT)
            finally:
                os._exit(0)
    return arm


def _catalog_file(case: Case, n: int = 1, text: str | None = None) -> Path:
    p = case.dir / "catalog.txt"
    p.write_text(text if text is not None else "".join(f"l{i:06d}: {(LAYER, LAYER_B)[i % 2]}\n" for i in range(n)))
    return p


def _real_golden(case: Case) -> None:
    """The checkout's own golden shards in the case's golden directory (review, check of real families)."""
    for p in case.golden.iterdir():
        p.unlink()
    for p in (ROOT / "golden").glob("*.json"):
        (case.golden / p.name).write_bytes(p.read_bytes())
    case.cwd = ROOT


def _orphans(case: Case, n: int, pending: bool = True, stale: bool = False) -> None:
    """``n`` orphan entries in ir_core's shard (``{"rejected": ...}`` at llvm23) and, with
    ``pending``, the pending file a check would leave for them (``stale``: old entries that
    no longer match the shard, which review drops and removes)."""
    flavors = G.load_shard(case.golden, "ir_core")
    extra = {f"fuzz_orphan_{i:06d}": {"rejected": "fuzz"} for i in range(n)}
    flavors.setdefault("llvm23", {}).update(extra)
    G.shard_path(case.golden, "ir_core").write_text(G.render_shard("ir_core", flavors))
    if pending:
        old = {"rejected": "was"} if stale else None
        P.save(case.golden, "ir_core", {f"llvm23/{c}": {"old": old or e, "new": None} for c, e in extra.items()})


def _signal(command: str, fresh: bool):
    def make(case: Case):
        delay = case.rng.uniform(0.0, 1.0 if fresh else 1.5)
        case.fresh = fresh
        case.preexec.append(_sigint_after(delay))
        g = str(case.golden)
        if command == "write":
            _changed(case)
        elif command == "merge-golden":
            valid = case.shard.read_bytes()
            for n, data in (("base", valid), ("ours", valid),
                            ("theirs", valid.replace(b"fam_a_plain", b"fam_a_theirs"))):
                (case.dir / f"{n}.json").write_bytes(data)
            case.raw = ["merge-golden", *(str(case.dir / f"{n}.json") for n in ("base", "ours", "theirs")),
                        os.path.join(g, "fam_a.json")]
        elif command == "layers":
            case.raw = ["layers", str(_catalog_file(case, 40)), *_LAYERS_FAST]
        elif command == "review":
            _real_golden(case)
            _orphans(case, 50)
            case.raw = ["review", "--list", "--golden-dir", g]
    return make


def _signal_kinds() -> list[Kind]:
    out = []
    for command, normal in (("check", GREEN), ("write", GREEN), ("list", GREEN), ("merge-golden", GREEN),
                            ("layers", GREEN), ("review", GREEN)):
        for fresh in (False, True):
            name = f"signal_int_{command.replace('-', '_')}" + ("_at_start" if fresh else "")
            out.append(Kind(name, "signal", _signal(command, fresh), (command,), normal | INTERRUPTED, 90.0,
                            post=_after_interrupt))
    return out


# -- pending files: scale, line ends, directories ---------------------------------------------

def _pending(kind: str):
    def make(case: Case):
        _real_golden(case)
        path = P.pending_path(case.golden, "ir_core")
        if kind == "100k":
            _orphans(case, 100_000)
        else:
            _orphans(case, 20, stale=kind in ("read_only_stale", "full_fs_stale"))
        data = path.read_bytes()
        if kind == "over_cap":
            path.write_bytes(data + b" " * (G.MAX_SHARD_BYTES + 1 - len(data)))
        elif kind == "crlf":
            path.write_bytes(data.replace(b"\n", b"\r\n"))
        elif kind == "mixed_line_ends":
            path.write_bytes(data.replace(b"\n", b"\r\n", 2))
        elif kind == "bom":
            path.write_bytes(b"\xef\xbb\xbf" + data)
        elif kind == "bare_cr":
            path.write_bytes(data.replace(b"\n", b"\r", 1))
        elif kind == "read_only_stale":
            os.chmod(case.golden, 0o555)
            case.preexec.append(gate_env.drop_capabilities)
            case.cleanup.append(lambda: os.chmod(case.golden, 0o755))
        elif kind == "full_fs_stale":
            fs = case.dir / "fs"
            if not gate_env.mount_tmpfs(fs, "16m"):
                raise SkipKind("cannot mount a tmpfs (needs root); pending_read_only_stale covers a refused write")
            case.cleanup.append(lambda: gate_env.umount(fs))
            (fs / "golden").mkdir()
            for p in case.golden.iterdir():
                (fs / "golden" / p.name).write_bytes(p.read_bytes())
            case.golden = fs / "golden"
            gate_env.fill(fs)
        case.raw = ["review", "--list", "--golden-dir", str(case.golden)]
    return make


def _listed(n: int):
    def post(case: Case, status, out: str, err: str) -> str | None:
        want = f"entries: {n} "
        if status == 0 and not any(ln.startswith("groups: ") and want in ln for ln in out.splitlines()):
            return f"review --list did not list {n} entries: {out[-200:]!r}"
        return None
    return post


def _check_over_cap(case: Case) -> None:
    _real_golden(case)
    _orphans(case, 150_000, pending=False)
    case.raw = ["check", "--only", "ir_core", "--golden-dir", str(case.golden), "-j", "1"]


def _not_written(case: Case, status, out: str, err: str) -> str | None:
    line = [ln for ln in out.splitlines() if ln.startswith("pending: ")]
    if status == 1 and (len(line) != 1 or "`parity write --only ir_core`" not in line[0]):
        return f"an over-cap pending set: want one `pending: not written: ...` line naming the fix, got {line[:2]}"
    if P.pending_path(case.golden, "ir_core").exists():
        return "a pending file over the cap was written (review cannot read it)"
    return None


# -- catalogs: scale and line ends ------------------------------------------------------------

def _catalog(kind: str, command: str = "layers"):
    def make(case: Case):
        if kind == "10k_layers":
            p = _catalog_file(case, 10_000)
        elif kind == "between_caps":  # over emit's 4 MiB cap, under layers' 32 MiB
            p = _catalog_file(case, text=f"a: {LAYER}\n" + ("#" + "x" * 1000 + "\n") * 5000)
        else:
            body = f"a: {LAYER}\nb: {LAYER_B}\n".encode()
            p = case.dir / "catalog.txt"
            p.write_bytes({"crlf": body.replace(b"\n", b"\r\n"), "mixed_line_ends": body.replace(b"\n", b"\r\n", 1),
                           "bom": b"\xef\xbb\xbf" + body, "bare_cr": body.replace(b"\n", b"\r", 1)}[kind])
        case.raw = (["layers", str(p), *_LAYERS_FAST] if command == "layers"
                    else ["emit", "--catalog", str(p), "--out", str(case.dir / "out")])
    return make


def _rows(n: int):
    def post(case: Case, status, out: str, err: str) -> str | None:
        last = (out.strip().splitlines() or [""])[-1]
        if status == 0 and not last.startswith(f"{n} layer{'s' if n != 1 else ''}, "):
            return f"want {n} rows' summary, last line {last[:160]!r}"
        return None
    return post


# -- concurrent writers -------------------------------------------------------------------------

def _sibling(case: Case, argv: list[str], delay: float) -> None:
    """Start ``parity ARGV`` now (a fresh interpreter, its own session) next to the case's
    command, which starts ``delay`` seconds later; the post check waits for it."""
    env = dict(case.env)
    case.sibling = subprocess.Popen([sys.executable, "-m", "parity", *argv], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env, cwd=case.cwd,
                                    start_new_session=True)
    case.preexec.append(lambda: time.sleep(delay))

    def reap():
        if case.sibling.poll() is None:
            os.killpg(case.sibling.pid, signal.SIGKILL)
            case.sibling.wait()
    case.cleanup.append(reap)


def _write_argv(case: Case) -> list[str]:
    return ["write", *case.world.common, "--golden-dir", str(case.golden), "--no-oracles", "--lock-timeout", "60"]


def _merge_argv(case: Case, tag: str) -> list[str]:
    """merge-golden with ``ours`` the shard itself (a driver run on the work tree file) and
    ``theirs`` adding the entry ``llvm23/zz_<tag>``."""
    valid = case.world.shards["fam_a.json"]
    flavors = G.parse_shard(valid, "valid", "fam_a")
    theirs = {fl: dict(e) for fl, e in flavors.items()}
    theirs.setdefault("llvm23", {})[f"zz_{tag}"] = {"rejected": tag}
    base = case.dir / f"base_{tag}.json"
    side = case.dir / f"theirs_{tag}.json"
    base.write_bytes(valid)
    side.write_text(G.render_shard("fam_a", theirs))
    return ["merge-golden", str(base), str(case.shard), str(side), str(case.shard)]


def _concurrent(first: str, second: str):
    def make(case: Case):
        if "write" in (first, second):
            _changed(case)
        case.raw = _write_argv(case) if first == "write" else _merge_argv(case, "a")
        other = _write_argv(case) if second == "write" else _merge_argv(case, "b")
        case.expect_entries = {"merge": [t for t, c in (("a", first), ("b", second)) if c == "merge-golden"],
                               "write": "write" in (first, second), "order": (first, second)}
        _sibling(case, other, case.rng.uniform(0.0, 1.5))
    return make


def _serial_outcome(case: Case, status, out: str, err: str) -> str | None:
    """Both commands done: the shard is what one serial order of them gives."""
    sib = case.sibling
    try:
        _, serr = sib.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        return "the concurrent command ran past 90 s"
    if sib.returncode not in (0,) or status != 0:
        return f"exits {status} and {sib.returncode} (want 0 and 0): {serr.decode(errors='replace')[-300:]!r}"
    left = _temps(case.golden)
    if left:
        return f"temp file(s) left: {left[:3]}"
    try:
        got = G.parse_shard(case.shard.read_bytes(), "fam_a.json", "fam_a")
    except G.GoldenError as exc:
        return f"the shard no longer parses: {exc}"
    valid = G.parse_shard(case.world.shards["fam_a.json"], "valid", "fam_a")
    added = sorted(c for c in got.get("llvm23", {}) if c.startswith("zz_"))
    want = case.expect_entries
    tags = [f"zz_{t}" for t in want["merge"]]
    if not want["write"]:  # merge || merge: both entries, whichever order (one lost = a lost update)
        return None if added == sorted(tags) else f"after two merges the shard holds {added}, want {tags}"
    base = {fl: {c: e for c, e in es.items() if not c.startswith("zz_")} for fl, es in got.items()}
    if base != valid:
        return "after write || merge the shard is not the blessed one plus the merged entry"
    return None if added in ([], tags) else f"write || merge left {added}"



# -- git beside a writer ------------------------------------------------------------------------
# The case directory is a git repository whose golden/ is committed, with the project's merge
# driver registered as `parity merge-golden --install` registers it (this interpreter). A real
# `git checkout BRANCH -- golden/fam_a.json` or `git merge` runs beside the case's command,
# 0-1.2 s into it (git takes no golden lock: it writes the work tree file itself, unlink then
# create); the merge driver git runs takes it.

def _git_env(case: Case) -> dict[str, str]:
    env = dict(case.env)
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0",
               GIT_AUTHOR_NAME="fuzz", GIT_AUTHOR_EMAIL="fuzz@invalid", GIT_COMMITTER_NAME="fuzz",
               GIT_COMMITTER_EMAIL="fuzz@invalid")
    return env


def _git(case: Case, *args: str) -> str:
    r = subprocess.run(["git", *args], cwd=case.dir, env=_git_env(case), capture_output=True, text=True, timeout=60)
    if r.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {r.stderr.strip()[-300:]}")
    return r.stdout


def _fam_a(case: Case, tags: tuple[str, ...] = (), stale: bool = False) -> bytes:
    """fam_a's blessed shard with the orphan entries ``llvm23/zz_TAG`` (kept by ``write --only
    fam_a/plain``), ``stale``: its ``plain`` entries naming a kernel the engines no longer emit."""
    flavors = G.parse_shard(case.world.shards["fam_a.json"], "valid", "fam_a")
    for t in tags:
        flavors.setdefault("llvm23", {})[f"zz_{t}"] = {"rejected": t}
    data = G.render_shard("fam_a", flavors).encode()
    return data.replace(b"fam_a_plain", b"fam_a_was") if stale else data


def _commit(case: Case, data: bytes, message: str) -> None:
    case.shard.write_bytes(data)
    _git(case, "add", "-A")
    _git(case, "commit", "-q", "--no-verify", "-m", message)


def _git_repo(case: Case, base: bytes) -> None:
    """``git init`` in the case directory, the driver registered, ``base`` committed."""
    _git(case, "init", "-q", "-b", "main")
    _git(case, "config", "merge.parity-golden.name", "golden shards (fuzz)")
    _git(case, "config", "merge.parity-golden.driver", f"{shlex.quote(sys.executable)} -m parity merge-golden %O %A %B %P")
    (case.dir / ".gitattributes").write_text("golden/*.json merge=parity-golden\n")
    _commit(case, base, "base")


def _git_sibling(case: Case, args: list[str], delay: float) -> None:
    """Run ``git ARGS`` in the case's repository ``delay`` seconds from now (its own session)."""
    case.sibling = subprocess.Popen(["sh", "-c", 'sleep "$1"; shift; exec git "$@"', "sh", f"{delay:.3f}", *args],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                    env=_git_env(case), cwd=case.dir, start_new_session=True)

    def reap():
        if case.sibling.poll() is None:
            os.killpg(case.sibling.pid, signal.SIGKILL)
            case.sibling.wait()
    case.cleanup.append(reap)


def _git_concurrent(op: str, command: str):
    """``op`` (checkout: ``git checkout side -- golden/fam_a.json``, side adding ``zz_side``;
    merge: ``git merge side``, main adding ``zz_ours``, side ``zz_theirs``) beside ``command``
    (write: ``write --only fam_a/plain`` of a stale shard; merge-golden: the work tree shard
    as ``ours``, ``theirs`` adding ``zz_b``)."""
    def make(case: Case):
        stale = command == "write"
        _git_repo(case, _fam_a(case, stale=stale))
        _git(case, "branch", "side")
        if op == "merge":
            _commit(case, _fam_a(case, ("ours",), stale), "ours")
        _git(case, "checkout", "-q", "side")
        _commit(case, _fam_a(case, ("side",) if op == "checkout" else ("theirs",), stale), "side")
        _git(case, "checkout", "-q", "main")
        if command == "write":
            case.extra = ["--only", "fam_a/plain", "--lock-timeout", "60"]
        else:
            base, theirs = case.dir / "base.json", case.dir / "theirs.json"
            base.write_bytes(_fam_a(case))
            theirs.write_bytes(_fam_a(case, ("b",)))
            case.raw = ["merge-golden", str(base), str(case.shard), str(theirs), str(case.shard)]
        case.git_op = op
        args = (["checkout", "side", "--", "golden/fam_a.json"] if op == "checkout"
                else ["merge", "-q", "--no-edit", "side"])
        _git_sibling(case, args, case.rng.uniform(0.0, 1.2 if command == "write" else 0.4))
    return make


def _git_outcome(case: Case, status, out: str, err: str) -> str | None:
    """Both done: the command exit 0, git done or refused cleanly, no temp file, a whole shard
    holding every entry both serial orders of the two keep (none lost)."""
    try:
        gout, gerr = case.sibling.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        return "git ran past 90 s"
    gerr = gout.decode(errors="replace") + gerr.decode(errors="replace")
    if status != 0:
        return f"the command exited {status} beside git {case.git_op}"
    left = _temps(case.golden) + sorted(p.name for p in case.dir.iterdir() if p.name.startswith(".merge_file"))
    if left:
        return f"temp file(s) left: {left[:3]}"
    try:
        got = G.parse_shard(case.shard.read_bytes(), "fam_a.json", "fam_a").get("llvm23", {})
    except G.GoldenError as exc:
        return f"the shard is not whole after git {case.git_op}: {exc}"
    rc = case.sibling.returncode
    # the driver found the work tree changed while it waited for the lock: a conflict, nothing lost
    moved = case.git_op == "merge" and rc == 1 and "changed in the work tree while git merged" in gerr
    merged = case.git_op == "merge" and (rc == 0 or moved)
    if rc and not moved and not (case.git_op == "merge" and "would be overwritten" in gerr):
        return f"git {case.git_op} exit {rc}: {gerr.strip()[-300:]!r}"
    if case.git_op == "merge" and moved != (case.dir / ".git" / "MERGE_HEAD").exists():
        return f"git merge exit {rc}: MERGE_HEAD {'missing' if moved else 'left'}"
    want = {"checkout": ["zz_side"], "merge": ["zz_ours", "zz_theirs"] if merged else ["zz_ours"]}[case.git_op]
    if case.command == "merge-golden" and case.git_op == "merge":
        want.append("zz_b")  # merge-golden's own entry: in the work tree before or after git's merge
    lost = [t for t in want if t not in got]
    if lost:
        return f"entries lost by {case.command} beside git {case.git_op}: {lost} (shard has {sorted(c for c in got if c.startswith('zz_'))})"
    if case.command == "write" and merged and got.get("plain", {}).get("kernel") != "fam_a_plain":
        return "git merge overwrote the entry `parity write` had just written (a lost update)"
    return None


KINDS = [
    *_signal_kinds(),
    # pending files (`parity review --list` on the checkout's own golden shards)
    Kind("pending_100k_orphans", "pending", _pending("100k"), ("review",), GREEN, 120.0, post=_listed(100_000)),
    Kind("pending_over_cap", "pending", _pending("over_cap"), ("review",), REFUSED, 60.0),
    Kind("pending_crlf", "pending", _pending("crlf"), ("review",), GREEN, 60.0, post=_listed(20)),
    Kind("pending_mixed_line_ends", "pending", _pending("mixed_line_ends"), ("review",), GREEN, 60.0,
         post=_listed(20)),
    Kind("pending_bom", "pending", _pending("bom"), ("review",), REFUSED, 60.0),
    Kind("pending_bare_cr", "pending", _pending("bare_cr"), ("review",), GREEN, 60.0, post=_listed(20)),
    Kind("pending_read_only_stale", "pending", _pending("read_only_stale"), ("review",), GREEN | REFUSED, 60.0),
    Kind("pending_full_fs_stale", "pending", _pending("full_fs_stale"), ("review",), GREEN | REFUSED, 60.0),
    Kind("pending_check_over_cap", "pending", _check_over_cap, ("check",), RED, 120.0, post=_not_written),
    # catalogs (`parity layers --no-verify --no-numerics`, `parity emit --catalog`)
    Kind("catalog_10k_layers", "catalog", _catalog("10k_layers"), ("layers",), GREEN, 120.0, post=_rows(10_000)),
    Kind("catalog_between_caps", "catalog", _catalog("between_caps"), ("layers",), GREEN, 60.0, post=_rows(1)),
    Kind("catalog_between_caps_emit", "catalog", _catalog("between_caps", "emit"), ("emit",), REFUSED, 60.0),
    Kind("catalog_crlf", "catalog", _catalog("crlf"), ("layers",), GREEN, 60.0, post=_rows(2)),
    Kind("catalog_mixed_line_ends", "catalog", _catalog("mixed_line_ends"), ("layers",), GREEN, 60.0,
         post=_rows(2)),
    Kind("catalog_bom", "catalog", _catalog("bom"), ("layers",), REFUSED, 60.0),
    Kind("catalog_bare_cr", "catalog", _catalog("bare_cr"), ("layers",), REFUSED, 60.0),
    # concurrent writers on one golden directory (the sibling is a fresh interpreter)
    Kind("concurrent_write_write", "concurrent", _concurrent("write", "write"), ("write",), GREEN, 120.0,
         post=_serial_outcome),
    Kind("concurrent_write_merge", "concurrent", _concurrent("write", "merge-golden"), ("write",), GREEN, 120.0,
         post=_serial_outcome),
    Kind("concurrent_merge_write", "concurrent", _concurrent("merge-golden", "write"), ("merge-golden",), GREEN,
         120.0, post=_serial_outcome),
    Kind("concurrent_merge_merge", "concurrent", _concurrent("merge-golden", "merge-golden"), ("merge-golden",),
         GREEN, 120.0, post=_serial_outcome),
    # a real git checkout / git merge (through the merge driver) beside a writer
    Kind("concurrent_git_checkout_write", "concurrent", _git_concurrent("checkout", "write"), ("write",), GREEN,
         120.0, post=_git_outcome),
    Kind("concurrent_git_merge_write", "concurrent", _git_concurrent("merge", "write"), ("write",), GREEN, 120.0,
         post=_git_outcome),
    Kind("concurrent_git_checkout_merge_golden", "concurrent", _git_concurrent("checkout", "merge-golden"),
         ("merge-golden",), GREEN, 120.0, post=_git_outcome),
    Kind("concurrent_git_merge_merge_golden", "concurrent", _git_concurrent("merge", "merge-golden"),
         ("merge-golden",), GREEN, 120.0, post=_git_outcome),
]
