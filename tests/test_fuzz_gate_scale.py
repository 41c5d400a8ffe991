"""The gate fuzz lane's issue 39 kinds (parity/fuzz/gate_kinds_scale.py): the post checks,
the start-up window of a Ctrl-C, the reproducers; and the Ctrl-C fixes the kinds found."""
from __future__ import annotations

import random
import signal
import threading
import time

import pytest

from parity import _early_sigint
from parity.app import main as M
from parity.fuzz import gate_run
from parity.fuzz import gate_kinds_scale as S
from parity.fuzz.gate_case import GREEN, Case, Kind
from parity.fuzz.gate_kinds import KINDS

FRESH_TB = ('Traceback (most recent call last):\n  File "<frozen runpy>", line 189, in _run_module_as_main\n'
            '  File "<frozen importlib._bootstrap>", line 1176, in _find_and_load\nKeyboardInterrupt\n')
OWN_TB = ('Traceback (most recent call last):\n  File "/x/parity/app/main.py", line 184, in main\n'
          'KeyboardInterrupt\n')


class _W:
    common = ["--configs", "x"]
    root = None


def _case(tmp_path, command="check") -> Case:
    g = tmp_path / "golden"
    g.mkdir(parents=True, exist_ok=True)
    return Case(_W(), g, random.Random(0), command)


def test_every_asked_for_group_is_there():
    groups = {k.group for k in KINDS}
    assert {"signal", "pending", "concurrent", "catalog"} <= groups
    names = {k.name for k in KINDS}
    for cmd in ("check", "write", "list", "merge_golden", "layers", "review"):
        assert {f"signal_int_{cmd}", f"signal_int_{cmd}_at_start"} <= names
    assert {"pending_100k_orphans", "pending_check_over_cap", "pending_read_only_stale", "pending_full_fs_stale",
            "pending_crlf", "pending_bom", "catalog_10k_layers", "concurrent_merge_merge"} <= names


@pytest.mark.parametrize("name,status,err,want", [
    ("signal_int_check_at_start", 70, FRESH_TB, "OUTSIDE"),   # before parity's first instruction
    ("signal_int_check_at_start", None, "", "OUTSIDE"),       # killed by SIGINT before any handler
    ("signal_int_check_at_start", 70, OWN_TB, "TRACEBACK"),   # in parity's own code: a failure
    ("signal_int_check", 70, FRESH_TB, "TRACEBACK"),          # a forked run has no start-up window
])
def test_a_ctrl_c_before_parity_runs_is_outside_the_contract(tmp_path, name, status, err, want):
    kind = next(k for k in KINDS if k.name == name)
    case = _case(tmp_path)
    got = gate_run.judge(kind, case, status, "", err, 0.5, 90.0, {})[0]
    assert got == want
    rep = gate_run.GateReport()
    rep.add(gate_run.Outcome(name, "check", got))
    assert len(rep.failures) == (0 if want == "OUTSIDE" else 1)


def test_after_ctrl_c_two_error_lines_or_a_temp_file_are_bad_state(tmp_path):
    kind = Kind("k", "signal", lambda c: None, ("check",), GREEN | S.INTERRUPTED, post=S._after_interrupt)
    case = _case(tmp_path)
    ok = "error: interrupted (Ctrl-C): stopped before the end\n"
    assert gate_run.judge(kind, case, 130, "", ok, 0.1, 90.0, {}) == ("PASS", "")
    v, detail = gate_run.judge(kind, case, 130, "", ok + ok, 0.1, 90.0, {})
    assert v == "BAD_STATE" and "2 stderr line(s)" in detail
    (case.golden / ".fam_a.x1.json.tmp").write_text("{")
    v, detail = gate_run.judge(kind, case, 0, "RESULT: GREEN\n", "", 0.1, 90.0, {})
    assert v == "BAD_STATE" and ".fam_a.x1.json.tmp" in detail


def test_a_failing_case_is_kept_with_a_repro_script(tmp_path):
    case = _case(tmp_path / "c")
    case.raw = ["check", "--golden-dir", str(case.golden)]
    case.env = {"NEW_VAR": "1"}
    (case.golden / "fam_a.json").write_text("{}")
    run = gate_run._Running(Kind("k", "shard", lambda c: None), case, case.dir, {}, 0.0)
    o = gate_run.Outcome("k", "check", "TRACEBACK", "boom")
    d = gate_run.keep_reproducer(run, o, "out\n", "Traceback\n", tmp_path / "fuzz-out", 1)
    assert d.name == "gate-001-k"
    assert (d / "case" / "golden" / "fam_a.json").read_text() == "{}"
    script = (d / "repro.sh").read_text().splitlines()
    assert script[1] == "# parity fuzz --gate: k (check): TRACEBACK: boom"
    assert "export NEW_VAR=1" in script and script[-1].endswith(f"-m parity check --golden-dir {case.golden}")
    assert (d / "stderr.txt").read_text() == "Traceback\n"


def test_a_ctrl_c_swallowed_by_a_finalizer_is_raised_again():
    # "Exception ignored in: <function Popen.__del__>... KeyboardInterrupt": the run went on to the end
    class U:
        exc_type = KeyboardInterrupt
    # a shell's background job (nohup ... &) starts with SIGINT ignored: the test starts from
    # Python's own handler, the one parity runs under
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            _early_sigint._unraisable(U())
            for _ in range(200):
                time.sleep(0.01)
    finally:
        signal.signal(signal.SIGINT, inherited)


def test_ctrl_c_while_the_command_module_imports_is_one_line(monkeypatch, capsys):
    def build_parser(cmd):
        raise KeyboardInterrupt
    monkeypatch.setattr(M, "build_parser", build_parser)
    before = signal.getsignal(signal.SIGINT)
    try:
        assert M.main(["check"]) == 130
    finally:
        signal.signal(signal.SIGINT, before)
    err = capsys.readouterr().err.splitlines()
    assert err == ["error: interrupted (Ctrl-C): stopped before the end; every file written is whole "
                   "(written beside, then renamed)"]


def test_a_spawned_worker_inherits_an_ignored_sigint():
    # spawn's exec left the blocked mask behind in one of the lane's runs: the disposition survives
    from parity.cli.interrupt import workers_ignore_sigint
    assert threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGINT)
    with workers_ignore_sigint():
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGINT) is before


def test_an_interrupt_caught_after_exec_code_does_not_kill_the_process_at_exit(tmp_path):
    # CPython's Py_RunMain killed the process with SIGINT at exit when the KeyboardInterrupt had
    # left exec'd string code (a dataclass's generated __init__ during an import), caught or not
    import subprocess
    import sys
    script = tmp_path / "s.py"
    script.write_text("import sys\nfrom parity.base.outputs import run_quietly_on_broken_pipe\n"
                      "def main(argv):\n    exec('raise KeyboardInterrupt')\n"
                      "print(run_quietly_on_broken_pipe(main))\n")  # the script then ends normally
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (0, "130\n"), (r.returncode, r.stderr)  # not killed by SIGINT (-2)
    assert r.stderr.splitlines() == ["error: interrupted (Ctrl-C): stopped before the end; every file written "
                                     "is whole (written beside, then renamed)"]


@pytest.mark.parametrize("argv,out", [(["--help"], "usage: parity"),           # ends in the start-up handler
                                      (["completion", "bash"], "#compdef parity")])  # ends through main's command
def test_python_m_parity_ignores_a_ctrl_c_after_its_command(tmp_path, argv, out):
    # runpy puts .../parity/__main__.py in argv[0] before main() runs: quiet_exit asked the
    # argv again, found no CLI, and a Ctrl-C during finalization killed `python -m parity`
    # by the signal (4 of 80 timed Ctrl-Cs). A Ctrl-C sent by a finalizer that runs as the
    # interpreter tears its modules down (after it gave SIGINT back to the OS) stands for it.
    import os
    import subprocess
    import sys
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os, signal\n"
        "class Late:\n    def __del__(self, kill=os.kill, pid=os.getpid(), sig=signal.SIGINT):\n"
        "        kill(pid, sig)\n"
        "late = Late()\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-m", "parity", *argv], capture_output=True, text=True, env=env,
                       timeout=120, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert (r.returncode, r.stderr) == (0, ""), (r.returncode, r.stderr[-500:])
    assert r.stdout.startswith(out) or out in r.stdout


def test_a_swallowed_exec_interrupt_does_not_kill_a_finished_command(tmp_path):
    # a KeyboardInterrupt that left exec'd code marks the interpreter (Py_RunMain then kills the
    # process by SIGINT after a SystemExit too): quiet_exit clears the mark at the end of every command
    import subprocess
    import sys
    # run with -m, as `python -m parity` is: a script's SystemExit leaves through Py_Exit, which
    # never looks at the mark; runpy's goes back to Py_RunMain, which does
    (tmp_path / "swallow.py").write_text(
        "import sys\nsys.argv[0] = '-m'\nimport parity\nfrom parity import _early_sigint\n"
        "sys.argv[0] = '/x/parity/__main__.py'\n"
        "try:\n    exec('raise KeyboardInterrupt')\nexcept KeyboardInterrupt:\n    pass\n"
        "_early_sigint.quiet_exit()\nraise SystemExit(0)\n")
    r = subprocess.run([sys.executable, "-m", "swallow"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert (r.returncode, r.stderr) == (0, ""), (r.returncode, r.stderr[-500:])  # not -2


def test_a_signal_kind_starts_its_command_with_sigint_handled():
    # a lane started in the background (`parity fuzz --gate &`) ignores SIGINT; its commands
    # inherited that and every Ctrl-C kind passed with no Ctrl-C delivered
    import os
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the case's child: its own group, as the lane makes it
            try:
                os.setpgrp()
                S._sigint_after(0.05)()  # the helper Ctrl-Cs this group only
                h = signal.getsignal(signal.SIGINT)
                os.write(w, b"1" if h is signal.default_int_handler else b"0")
            finally:
                os._exit(0)
        os.close(w)
        got = os.read(r, 1)
        os.close(r)
        os.waitpid(pid, 0)
    finally:
        signal.signal(signal.SIGINT, before)
    assert got == b"1"
