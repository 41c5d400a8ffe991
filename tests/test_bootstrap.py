"""scripts/bootstrap.sh never runs pip outside a virtual environment (PEP 668:
Debian's and Ubuntu's own Python refuse it, and it must not be touched).

The script runs for real against stub executables on PATH: a ``python3`` that
logs every call and makes a stub venv on ``-m venv``, whose ``bin/python``
logs its calls too, and stub ``apt-get`` / ``sudo`` / ``locale`` / ``opt-19`` /
``ld.lld-22`` / ``llvm-mca-22`` / ``pkg-config``. The log says which interpreter ran pip."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

OUTER_PY = r"""#!/bin/bash
echo "OUTER $*" >> "$STUB_LOG"
case "$1 $2" in
  "-c import ensurepip, venv") [ -e "$STUB_DIR/has_venv" ]; exit $?;;
  "-m venv")
    mkdir -p "$3/bin"
    cp "$STUB_DIR/inner_python" "$3/bin/python"
    echo "home = /usr/bin" > "$3/pyvenv.cfg"
    exit 0;;
  "-m pip") echo "PIP OUTER $*" >> "$STUB_LOG"; exit 0;;
  "--version ") echo "Python 3.11.2"; exit 0;;
esac
exit 0
"""

INNER_PY = r"""#!/bin/bash
echo "VENV $0 $*" >> "$STUB_LOG"
case "$1" in
  -c) [ -z "$STUB_VENV_LIES" ]; exit $?;;   # the sys.prefix != sys.base_prefix check
  -m) [ "$2" = pip ] && echo "PIP $0 $*" >> "$STUB_LOG"; exit 0;;
esac
exit 0
"""

APT = r"""#!/bin/bash
echo "APT $*" >> "$STUB_LOG"
for a in "$@"; do [ "$a" = python3-venv ] && touch "$STUB_DIR/has_venv"; done
exit 0
"""


def _exe(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _run(tmp_path: Path, *, has_venv: bool, venv_lies: bool = False):
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "bootstrap.sh", repo / "scripts" / "bootstrap.sh")
    _exe(stubs / "python3", OUTER_PY)
    _exe(stubs / "inner_python", INNER_PY)
    _exe(stubs / "apt-get", APT)
    _exe(stubs / "sudo", '#!/bin/bash\n"$@"\n')
    _exe(stubs / "locale", '#!/bin/bash\necho C.UTF-8\necho de_DE.utf8\n')
    _exe(stubs / "opt-19", "#!/bin/bash\nexit 0\n")
    _exe(stubs / "ld.lld-22", "#!/bin/bash\nexit 0\n")
    _exe(stubs / "llvm-mca-22", "#!/bin/bash\nexit 0\n")
    _exe(stubs / "pkg-config", "#!/bin/bash\nexit 0\n")
    if has_venv:
        (stubs / "has_venv").touch()
    log = tmp_path / "log"
    log.touch()
    env = {"PATH": f"{stubs}:/usr/bin:/bin", "STUB_LOG": str(log), "STUB_DIR": str(stubs),
           "HOME": str(tmp_path)}
    if venv_lies:
        env["STUB_VENV_LIES"] = "1"
    res = subprocess.run(["bash", str(repo / "scripts" / "bootstrap.sh")], capture_output=True, text=True,
                         env=env, cwd=tmp_path)
    return res, log.read_text().splitlines(), repo


def test_pip_runs_only_in_the_repos_venv(tmp_path):
    res, log, repo = _run(tmp_path, has_venv=True)
    assert res.returncode == 0, res.stderr
    pips = [ln for ln in log if ln.startswith("PIP")]
    assert pips == [f"PIP {repo}/.venv/bin/python -m pip install -q --disable-pip-version-check "
                    "scikit-build-core>=0.10 cffi cmake ninja",
                    f"PIP {repo}/.venv/bin/python -m pip install -q --disable-pip-version-check "
                    "--no-build-isolation -e .[test]"]
    assert f"OUTER -m venv {repo}/.venv" in log
    assert not any(ln.startswith("APT") for ln in log)          # nothing missing: no apt
    # the venv check ran before pip
    i_check = next(i for i, ln in enumerate(log) if ln.startswith("VENV") and " -c " in ln)
    i_pip = next(i for i, ln in enumerate(log) if ln.startswith("PIP"))
    assert i_check < i_pip
    assert ". .venv/bin/activate" in res.stderr


def test_installs_python3_venv_when_venv_cannot_work(tmp_path):
    res, log, repo = _run(tmp_path, has_venv=False)
    assert res.returncode == 0, res.stderr
    apt = [ln for ln in log if ln.startswith("APT install")]
    assert len(apt) == 1 and apt[0].split()[-1] == "python3-venv"
    assert [ln for ln in log if ln.startswith("PIP")] == [
        f"PIP {repo}/.venv/bin/python -m pip install -q --disable-pip-version-check "
        "scikit-build-core>=0.10 cffi cmake ninja",
        f"PIP {repo}/.venv/bin/python -m pip install -q --disable-pip-version-check "
        "--no-build-isolation -e .[test]"]


def test_refuses_pip_when_the_interpreter_is_not_a_venv(tmp_path):
    res, log, _ = _run(tmp_path, has_venv=True, venv_lies=True)
    assert res.returncode == 2
    assert not any(ln.startswith("PIP") for ln in log)
    err = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(err) == 1 and "is not a virtual environment's interpreter; refusing to run pip" in err[0]


def test_every_pip_call_in_the_script_goes_through_the_venv():
    text = (ROOT / "scripts" / "bootstrap.sh").read_text()
    code = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    calls = [ln for ln in code if "pip" in ln and "install" in ln and "apt" not in ln]
    assert calls and all(ln.lstrip().startswith('"$VPY" -m pip') for ln in calls), calls
