"""``parity fuzz --gate``: run each input kind of parity/fuzz/gate_kinds.py as
a real ``parity`` process and hold it to the command contract (docs/fuzz.md).

A case is a kind, a command and a fresh scratch golden directory. The command
runs in a forked child of this process (``parity.app.main.main`` already
imported: a case costs a fork, not an interpreter start; a kind that needs a
fresh interpreter -- an I/O encoding, a locale -- is run with
``python -m parity``), with its own stdout/stderr files, environment, working
directory and OS conditions, in its own process group, killed at its bound.

The contract, per case (:func:`judge`):

* never a traceback, a death by signal, or a run past the bound (HANG);
* no output line -- split as ``str.splitlines`` splits, so U+2028, U+0085 and
  the other separators count -- starting with ``FORGED``, the marker every
  hostile text carries;
* the exit status is one the kind allows (0 GREEN / done, 1 RED, 2 refused);
* exit 2: exactly one ``error:`` line on stderr (besides the provenance and
  ``note:`` lines), and no shard of the golden directory changed;
* exit 1 from ``check``: the last stdout line is ``RESULT: RED``; exit 0:
  ``RESULT: GREEN``;
* exit 0 from ``write``: every shard parses and is in the canonical layout;
* the kind's ``post`` check, if any (BAD_STATE): after Ctrl-C one ``error:`` line and no
  temp file, after concurrent writers no lost entry (parity/fuzz/gate_kinds_scale.py).

A failing case is kept as a reproducer (:func:`keep_reproducer`): its directory, the
scratch world it ran in and a ``repro.sh`` that runs the one command again.
"""
from __future__ import annotations

import io
import os
import random
import resource
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from parity.fuzz import gate_env
from parity.golden import shards as G
from parity.fuzz.gate_case import Case, Kind, SkipKind
from parity.fuzz.gate_kinds import KINDS

TRACEBACK_EXIT = 70  # the child's status for an exception that escaped parity's main
PASS = "PASS"
OUTSIDE = "OUTSIDE"  # counted, not a failure: a Ctrl-C before parity's first instruction (_interpreter_start)
FAILURES = ("SETUP_ERROR", "TRACEBACK", "HANG", "SIGNAL", "FORGED", "WRONG_EXIT", "ERROR_LINES", "CHANGED_AFTER_REFUSAL",
            "NO_RESULT_LINE", "BAD_SHARD", "BAD_STATE")
_ALLOWED_STDERR = ("parity: golden", "note: ")


@dataclass
class Outcome:
    kind: str
    command: str
    verdict: str
    detail: str = ""
    seconds: float = 0.0


@dataclass
class GateReport:
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # kind -> verdict -> n
    failures: list[Outcome] = field(default_factory=list)
    cases: int = 0
    seconds: float = 0.0
    seed: int = 0
    skipped: dict[str, str] = field(default_factory=dict)  # kind -> why it could not be set up
    out: Path | None = None  # where failing cases are kept (keep_reproducer)
    reproducers: list = field(default_factory=list)  # their directories

    def add(self, o: Outcome) -> None:
        self.cases += 1
        c = self.counts.setdefault(o.kind, {})
        c[o.verdict] = c.get(o.verdict, 0) + 1
        if o.verdict not in (PASS, OUTSIDE):
            self.failures.append(o)


class World:
    """The scratch root: echo engine, configs package, a valid golden directory."""

    def __init__(self, root: Path, seed: int, main):
        self.root = Path(root)
        self.main = main  # parity.app.main.main, handed in (parity.app.main imports this package)
        self.root.mkdir(parents=True, exist_ok=True)
        self.engine, self.package = gate_env.write_world(self.root, f"{seed & 0xffffffff:08x}")
        self.common = ["--engines", f"{self.engine},{self.engine}", "--configs", self.package,
                       "--timeout", "20", "-j", "1"]
        if str(self.root) not in sys.path:
            sys.path.insert(0, str(self.root))
        valid = self.root / "valid"
        valid.mkdir()
        out = run_child(self, ["write", *self.common, "--no-oracles", "--golden-dir", str(valid)],
                        Case(self, valid, random.Random(0), "write"), bound=120)
        if out[0] != 0:
            raise RuntimeError(f"parity fuzz --gate: could not bless the scratch golden directory: "
                               f"{out[2].strip()[-400:]}")
        self.shards = {p.name: p.read_bytes() for p in sorted(valid.glob("*.json"))}

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTHONIOENCODING")}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(self.root), env.get("PYTHONPATH", "")) if p)
        env["NO_COLOR"] = "1"
        return env


def _child_main(argv: list[str], case: Case, out_fd: int, err_fd: int) -> None:
    """In the forked child: set the case's world up, run parity's main, exit with its status."""
    try:
        os.setpgrp()
        f = os.open(os.devnull, os.O_RDONLY)
        os.dup2(f, 0)
        os.close(f)
        os.dup2(out_fd, 1)  # pipes, not files: a file-size limit of the case never cuts its output
        os.dup2(err_fd, 2)
        sys.stdin = open(0, "r", closefd=False)
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", line_buffering=True)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", line_buffering=True)
        os.environ.clear()
        os.environ.update(case.env)
        os.chdir(case.cwd)
        _limit_memory()
        sys.path[:0] = case.sys_path
        for fn in case.preexec:
            fn()
        main = case.world.main
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, (int, type(None))):
                print(exc.code, file=sys.stderr)
        except BaseException:  # noqa: BLE001 - exactly what the lane looks for
            traceback.print_exc()
            rc = TRACEBACK_EXIT
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            pass
        os._exit(rc if isinstance(rc, int) and 0 <= rc < 256 else TRACEBACK_EXIT)
    except BaseException:  # noqa: BLE001 - never return into the parent's code
        try:
            traceback.print_exc()
        finally:
            os._exit(TRACEBACK_EXIT)


#: Heap a case may use (RLIMIT_DATA, bytes): a command that reads a device or a huge file
#: until it runs out of memory (issue 24 finding 13) must fail inside its case, not
#: crowd out the machine. Far above what any gate command needs.
CASE_MEMORY = 2 * 2**30


def _limit_memory() -> None:
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (CASE_MEMORY, CASE_MEMORY))
    except (ValueError, OSError):
        pass


#: Output kept per stream of a case (bytes); the rest is read and dropped.
MAX_OUTPUT = 4 * 2**20


@dataclass
class _Running:
    """One case in flight: its child process and the pipes its output comes through."""

    kind: Kind
    case: Case
    cdir: Path
    before: dict
    t0: float
    fds: list = field(default_factory=list)  # read ends: stdout, stderr
    bufs: list = field(default_factory=lambda: [bytearray(), bytearray()])
    pid: int = 0
    popen: subprocess.Popen | None = None
    status: int | None = None
    done: bool = False


def _start(world: World, kind: Kind, case: Case, cdir: Path, before: dict) -> _Running:
    """Start the case's command (a fork, or ``python -m parity`` for a fresh interpreter)."""
    argv = case.argv()
    run = _Running(kind, case, cdir, before, time.monotonic())
    (ro, wo), (re_, we) = os.pipe(), os.pipe()
    for fd in (ro, re_):
        os.set_blocking(fd, False)
    run.fds = [ro, re_]
    try:
        if case.fresh:
            try:
                run.popen = subprocess.Popen(
                    [sys.executable, "-m", "parity", *argv], stdout=wo, stderr=we, stdin=subprocess.DEVNULL,
                    env=case.env, cwd=case.cwd, start_new_session=True,
                    preexec_fn=lambda: [f() for f in (_limit_memory, *case.preexec)])
            except OSError as exc:
                run.bufs[1] += f"cannot start: {exc}\n".encode()
                run.status, run.done = TRACEBACK_EXIT, True
                return run
            run.pid = run.popen.pid
        else:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                os.close(ro)
                os.close(re_)
                _child_main(argv, case, wo, we)
            run.pid = pid
    finally:
        os.close(wo)
        os.close(we)
    return run


def _drain(run: _Running) -> None:
    for i, fd in enumerate(run.fds):
        if fd < 0:
            continue
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            if not chunk:
                os.close(fd)
                run.fds[i] = -1
                break
            if len(run.bufs[i]) < MAX_OUTPUT:
                run.bufs[i] += chunk[: MAX_OUTPUT - len(run.bufs[i])]


def _poll(run: _Running) -> bool:
    """True once the case's process has ended or was killed at its bound."""
    if run.done:
        return True
    _drain(run)
    done, status = os.waitpid(run.pid, os.WNOHANG)
    if done:
        code = os.waitstatus_to_exitcode(status)
        if run.popen is not None:
            run.popen.returncode = code
        run.status, run.done = (code if code >= 0 else None), True
        run.case.signum = -code if code < 0 else None
    elif time.monotonic() - run.t0 > run.kind.bound:
        _kill_group(run.pid)
        os.waitpid(run.pid, 0)
        if run.popen is not None:
            run.popen.returncode = -9
        run.status, run.done = None, True
    return run.done


def _output(run: _Running) -> tuple[str, str]:
    _drain(run)
    _kill_group(run.pid)  # workers a dead parent left behind (they hold the pipes open)
    deadline = time.monotonic() + 5.0
    while any(fd >= 0 for fd in run.fds) and time.monotonic() < deadline:
        _drain(run)
        time.sleep(0.01)
    for i, fd in enumerate(run.fds):
        if fd >= 0:
            os.close(fd)
            run.fds[i] = -1
    return tuple(bytes(b).decode("utf-8", errors="surrogateescape") for b in run.bufs)


def run_child(world: World, argv: list[str], case: Case, bound: float) -> tuple[int | None, str, str, float]:
    """(exit status or None for a hang or signal, stdout, stderr, seconds) of one command, waited for."""
    kind = Kind("run", "run", lambda c: None, (case.command,), bound=bound)
    case.raw = argv
    run = _start(world, kind, case, case.dir, {})
    while not _poll(run):
        time.sleep(0.02)
    out, err = _output(run)
    return run.status, out, err, time.monotonic() - run.t0


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _interpreter_start(status: int | None, err: str, out: str = "") -> bool:
    """A fresh interpreter stopped by Ctrl-C before ``parity/__init__.py`` installed its
    handler (parity/_early_sigint.py): killed by SIGINT with no output, or a
    KeyboardInterrupt traceback with no frame of parity's own code (site, runpy, importlib,
    the ``from parity import _early_sigint`` line itself). Outside the contract: no
    program can handle a signal before its first instruction (docs/fuzz.md). A death
    after the command printed (its finalization) is not the start-up: a failure."""
    if out.strip():
        return False
    if status is None and not err.strip():
        return True
    if "KeyboardInterrupt" not in err or "Traceback" not in err:
        return False
    frames = [ln for ln in err.splitlines() if ln.strip().startswith("File ")]
    own = [f for f in frames if "/parity/" in f and not f.rstrip().endswith("parity/__init__.py\", line 6, in <module>")]
    return not own and "multiprocessing" not in err


def judge(kind: Kind, case: Case, status: int | None, out: str, err: str, secs: float, bound: float,
          before: dict) -> tuple[str, str]:
    """(verdict, detail) of one case against the contract (module docstring)."""
    text = out + err
    if kind.name.endswith("_at_start") and _interpreter_start(status, err, out):
        return OUTSIDE, "Ctrl-C before parity's first handler (the interpreter's own start-up)"
    if "Traceback (most recent call last)" in text or status == TRACEBACK_EXIT:
        tail = [ln for ln in err.splitlines() if ln.strip()][-1:] or ["(no message)"]
        return "TRACEBACK", tail[0][:300]
    if status is None:
        return ("HANG", f"ran past its {bound:g} s bound") if secs >= bound else ("SIGNAL", f"died by signal {getattr(case, 'signum', None)}")
    for line in text.splitlines():
        if line.startswith("FORGED"):
            return "FORGED", repr(line[:120])
    allowed = kind.allowed(case.command)
    if status not in allowed:
        first = (err.strip().splitlines() or out.strip().splitlines() or [""])[0]
        return "WRONG_EXIT", f"exit {status}, want {sorted(allowed)}: {first[:300]!r}"
    if status == 2:
        lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith(_ALLOWED_STDERR)]
        if len(lines) != 1 or not lines[0].startswith("error: "):
            return "ERROR_LINES", f"{len(lines)} stderr line(s): {err[:300]!r}"
        if gate_env.snapshot(case.golden) != before:
            return "CHANGED_AFTER_REFUSAL", f"a shard of {case.golden.name} changed though {case.command} refused"
    if case.command == "check" and status in (0, 1):
        last = (out.rstrip("\n").splitlines() or [""])[-1]
        want = "RESULT: GREEN" if status == 0 else "RESULT: RED"
        if last != want:
            return "NO_RESULT_LINE", f"exit {status} but last line {last[:120]!r}"
    if case.command == "write" and status == 0:
        for p in sorted(case.golden.glob("*.json")):
            try:
                data = G.read_regular_file(p)
                flavors = G.parse_shard(data, p.name, p.stem)
                problem = G.layout_problem(data, p.stem, flavors)
            except G.GoldenError as exc:
                return "BAD_SHARD", str(exc)[:300]
            if problem:
                return "BAD_SHARD", f"{p.name}: {problem}"
    if kind.post is not None:
        try:
            why = kind.post(case, status, out, err)
        except Exception as exc:  # noqa: BLE001 - a bug of the check itself is a finding too
            why = f"the post check raised {type(exc).__name__}: {exc}"
        if why:
            return "BAD_STATE", why
    return PASS, ""


def run_gate_fuzz(seconds: float, seed: int, main, only: list[str] | None = None, progress=None,
                  jobs: int = 2, out: Path | None = None) -> GateReport:
    """Run the kinds round-robin (every kind once, in a seeded shuffled order, then again)
    until ``seconds`` have passed and every kind ran at least once, ``jobs`` cases at a
    time. ``main`` is ``parity.app.main.main``. A failing case is kept under ``out``
    (:func:`keep_reproducer`; None: not kept)."""
    rep = GateReport(seed=seed, out=out)
    rng = random.Random(seed)
    kinds = [k for k in KINDS if not only or k.name in only or k.group in only]
    t0 = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix="parity-fuzz-gate."))

    def schedule():
        round_no = 0
        while round_no == 0 or time.monotonic() - t0 < seconds:
            order = list(kinds)
            rng.shuffle(order)
            for kind in order:
                if round_no > 0 and time.monotonic() - t0 >= seconds:
                    return
                yield kind, round_no
            round_no += 1

    running: list[_Running] = []
    try:
        world = World(base / "world", seed, main)
        todo = schedule()
        more = True
        while more or running:
            while more and len(running) < max(1, jobs):
                try:
                    kind, round_no = next(todo)
                except StopIteration:
                    more = False
                    break
                run = _setup(world, kind, rng, base, rep, round_no)
                if run is not None:
                    running.append(run)
            for run in [r for r in running if _poll(r)]:
                running.remove(run)
                _finish(run, rep)
                if progress:
                    progress(rep)
            time.sleep(0.02)
    finally:
        for run in running:
            _kill_group(run.pid)
        _cleanup(base)
    rep.seconds = time.monotonic() - t0
    return rep


def _setup(world: World, kind: Kind, rng: random.Random, base: Path, rep: GateReport,
           round_no: int) -> _Running | None:
    """Make the kind's input in a fresh case directory and start its command (None: skipped)."""
    command = kind.commands[round_no % len(kind.commands)]
    cdir = Path(tempfile.mkdtemp(prefix=f"{kind.name}.", dir=base))
    case = Case(world, cdir / "golden", random.Random(rng.getrandbits(64)), command)
    case.golden.mkdir()
    for name, data in world.shards.items():
        (case.golden / name).write_bytes(data)
    try:
        kind.make(case)
        return _start(world, kind, case, cdir, gate_env.snapshot(case.golden))
    except SkipKind as exc:
        rep.skipped[kind.name] = str(exc)
    except Exception as exc:  # noqa: BLE001 - a bug of the lane itself: reported, the run goes on
        rep.add(Outcome(kind.name, command, "SETUP_ERROR", f"{type(exc).__name__}: {exc}"))
    _teardown(case, cdir)
    return None


def _finish(run: _Running, rep: GateReport) -> None:
    out, err = _output(run)
    secs = time.monotonic() - run.t0
    verdict, detail = judge(run.kind, run.case, run.status, out, err, secs, run.kind.bound, run.before)
    o = Outcome(run.kind.name, run.case.command, verdict, detail, secs)
    rep.add(o)
    if verdict not in (PASS, OUTSIDE) and rep.out is not None:
        try:
            rep.reproducers.append(keep_reproducer(run, o, out, err, rep.out, len(rep.failures)))
        except OSError as exc:  # a full disk: the failure is still reported
            o.detail += f" (reproducer not written: {exc.strerror or exc})"
    _teardown(run.case, run.cdir)


def _not_kept(src: str, names: list[str]) -> list[str]:
    """What a reproducer does not copy: FIFOs, sockets, devices, files over 64 MiB (a sparse
    10 GiB shard; its kind makes it again)."""
    out = []
    for x in names:
        p = os.path.join(src, x)
        try:
            st = os.lstat(p)
        except OSError:
            out.append(x)
            continue
        if not (stat.S_ISLNK(st.st_mode) or stat.S_ISDIR(st.st_mode)
                or (stat.S_ISREG(st.st_mode) and st.st_size <= 64 * 2**20)):
            out.append(x)
    return out


def keep_reproducer(run: _Running, o: Outcome, out: str, err: str, where: Path, n: int) -> Path:
    """Keep a failing case as ``where/gate-N-KIND/``: the case's directory as the command
    left it (``case/``), the scratch world it ran in (``world/``: the echo engine, the
    configs package), its output, and ``repro.sh`` running the one command again with the
    case's environment changes. A case is already minimal: one kind's input made from
    the valid golden directory, one command, one sampled hostile text or delay."""
    case = run.case
    d = Path(where) / f"gate-{n:03d}-{o.kind}"
    if d.exists():
        shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    shutil.copytree(run.cdir, d / "case", symlinks=True, ignore_dangling_symlinks=True, ignore=_not_kept)
    world = getattr(case.world, "root", None)
    if world is not None:
        shutil.copytree(world, d / "world", symlinks=True, ignore=shutil.ignore_patterns("valid", "__pycache__"))
    (d / "stdout.txt").write_text(out, errors="surrogateescape")
    (d / "stderr.txt").write_text(err, errors="surrogateescape")
    base = os.environ
    env = {k: v for k, v in case.env.items() if base.get(k) != v}
    argv = case.argv()
    lines = ["#!/bin/sh", f"# parity fuzz --gate: {o.kind} ({o.command}): {o.verdict}: {o.detail[:300]}",
             "# paths below are those of the run; case/ and world/ beside this script hold their files",
             *(f"export {k}={shlex.quote(v)}" for k, v in sorted(env.items()) if k.isidentifier()),
             f"cd {shlex.quote(str(case.cwd))}",
             " ".join(shlex.quote(a) for a in [sys.executable, "-m", "parity", *argv])]
    (d / "repro.sh").write_text("\n".join(lines) + "\n", errors="surrogateescape")
    return d


def _teardown(case: Case, cdir: Path) -> None:
    for fn in reversed(case.cleanup):
        try:
            fn()
        except Exception:  # noqa: BLE001 - cleanup of a scratch case
            pass
    _cleanup(cdir)


def _cleanup(path: Path) -> None:
    for root, dirs, _files in os.walk(path):
        for d in dirs:
            try:
                os.chmod(os.path.join(root, d), 0o755)
            except OSError:
                pass
    shutil.rmtree(path, ignore_errors=True)
