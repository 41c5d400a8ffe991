"""Shell completion (issue 38 item 6; parity/app/completion.py, docs/cli.md "Shell
completion"): ``parity completion bash|zsh|fish`` prints argcomplete's registration code,
and a real shell completing through it offers exactly what the real parser has: every
subcommand, every option of ``check``, family names for ``--only``."""
import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from parity.app.main import build_parser
from parity.app.precommit import family_names
from parity.config import CANONICAL_FLAVORS

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # the environment's parity
ENV = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
ENV.pop("_ARGCOMPLETE", None)

# Completes LINE through the bash code the way readline does (COMP_WORDS, COMP_CWORD,
# the completion function with the command, current and previous word) and prints COMPREPLY.
BASH_DRIVER = r'''
source "$1"
line="$2"
COMP_LINE="$line"; COMP_POINT=${#line}
read -ra COMP_WORDS <<< "$line"; [[ "$line" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMPREPLY=()
_python_argcomplete parity "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
'''


@pytest.fixture(scope="module")
def scripts(tmp_path_factory):
    d = tmp_path_factory.mktemp("completion")
    out = {}
    for shell in ("bash", "zsh", "fish"):
        r = subprocess.run([str(BIN / "parity"), "completion", shell], capture_output=True, text=True, env=ENV)
        assert r.returncode == 0 and r.stderr == "", r.stderr
        out[shell] = d / f"parity.{shell}"
        out[shell].write_text(r.stdout)
    return out


def subparsers(parser):
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices


def bash_complete(scripts, line: str) -> list[str]:
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", BASH_DRIVER, "driver", str(scripts["bash"]), line],
                       capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    return [w.strip() for w in r.stdout.splitlines() if w.strip()]


def test_the_bash_script_is_valid_bash_and_registers_parity(scripts):
    r = subprocess.run(["bash", "-n", str(scripts["bash"])], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "complete " in scripts["bash"].read_text() and " parity" in scripts["bash"].read_text()


def test_bash_completes_every_subcommand_of_the_real_parser(scripts):
    commands = set(subparsers(build_parser()))
    assert {"check", "write", "review", "completion", "golden-diff", "run"} <= commands
    offered = bash_complete(scripts, "parity ")
    assert commands <= set(offered)
    assert set(offered) - commands == {"-h", "--help", "--version", "--color", "--write", "--check"}
    assert bash_complete(scripts, "parity rev") == ["review"]


def test_bash_completes_exactly_the_options_of_check(scripts):
    check = subparsers(build_parser("check"))["check"]
    long_options = {s for a in check._actions if a.help != argparse.SUPPRESS  # hidden options stay hidden
                    for s in a.option_strings if s.startswith("--")}
    assert {"--only", "--junit", "--annotations", "--shard", "--record-costs", "--color"} <= long_options
    assert set(bash_complete(scripts, "parity check --")) == long_options
    assert bash_complete(scripts, "parity check --sh") == ["--shard"]


def test_only_completes_families_after_a_comma_and_flavor_the_canonical_flavors(scripts):
    assert "ir_core" in family_names()
    assert bash_complete(scripts, "parity check --only conv_abi,ir") == ["conv_abi,ir_core"]
    assert set(bash_complete(scripts, "parity check --only ")) == family_names()
    assert bash_complete(scripts, "parity write --flavor ") == list(CANONICAL_FLAVORS)
    assert set(bash_complete(scripts, "parity completion ")) == {"-h", "--help", "--color", "bash", "zsh", "fish"}


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed (CI installs it: .ci/packages.sh)")
def test_fish_parses_the_script_and_completes_through_it(scripts):
    r = subprocess.run(["fish", "--no-execute", str(scripts["fish"])], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    probe = (f"source {scripts['fish']}; complete -C 'parity chec'; echo ==; complete -C 'parity check --sh'; "
             "echo ==; complete -C 'parity check --only ir'")
    r = subprocess.run(["fish", "--no-config", "-c", probe], capture_output=True, text=True, env=ENV, cwd=ROOT,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    command, shard, only = r.stdout.split("==\n")
    assert command.splitlines() == ["check\tbyte identity and goldens in one verdict"]  # fish shows the help
    assert shard.splitlines()[0].startswith("--shard\trun shard I of N only")
    assert only.splitlines() == ["ir_core"]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed (CI installs it: .ci/packages.sh)")
def test_zsh_parses_and_loads_the_script(scripts):
    r = subprocess.run(["zsh", "-n", str(scripts["zsh"])], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(["zsh", "-f", "-c", f"autoload -U compinit && compinit -u && source {scripts['zsh']} && "
                        "print -r -- $_comps[parity]"], capture_output=True, text=True, env=ENV, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "_python_argcomplete"


def test_a_misspelt_shell_is_one_error_line():
    r = subprocess.run([str(BIN / "parity"), "completion", "ksh"], capture_output=True, text=True, env=ENV)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == ["error: parity completion: argument SHELL: invalid choice: 'ksh' "
                                     "(choose from 'bash', 'zsh', 'fish') (see `parity completion --help`)"]


def test_a_command_whose_engine_does_not_import_completes_without_a_traceback(tmp_path):
    """build_parser(command) raising EngineImportError (a conflict marker in an engine): the
    whole parser answers (here the real one, engines fine, so check's options are there; with
    a broken engine main.build_parser(None) makes check a stub); no traceback."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from parity.app import completion, main\n"
        "from parity.base.engine_import import EngineImportError\n"
        "def broken(command):\n"
        "    if command is not None:\n"
        "        raise EngineImportError('python engine failed to import: x.py:1: invalid syntax')\n"
        "    return main.build_parser(None)\n"
        "completion.complete(broken, main.command_of)\n")
    out = {}
    for line in ("parity check --sh", "parity comp"):
        dest = tmp_path / "out.txt"
        env = dict(ENV, _ARGCOMPLETE="1", _ARGCOMPLETE_IFS="\n", COMP_LINE=line, COMP_POINT=str(len(line)),
                   _ARGCOMPLETE_STDOUT_FILENAME=str(dest))
        r = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True, env=env, cwd=ROOT,
                           timeout=60)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
        out[line] = dest.read_text().split()
    assert out == {"parity check --sh": ["--shard"], "parity comp": ["completion"]}


def test_run_completes_its_own_options(scripts):
    """``parity run`` has its own parser (parity/runtime/cli.py): its options complete, and
    ``--flavor`` offers the canonical flavors there too."""
    pytest.importorskip("elftools", reason="parity run needs the [runtime] extra (pyelftools)")
    from parity.runtime.cli import _parser
    long_options = {s for a in _parser()._actions if a.help != argparse.SUPPRESS
                    for s in a.option_strings if s.startswith("--")}
    assert {"--split-k", "--select", "--aot-manifest", "--build-only"} <= long_options
    assert set(bash_complete(scripts, "parity run --")) == long_options
    assert bash_complete(scripts, "parity run --aot") == ["--aot-manifest"]
    assert bash_complete(scripts, "parity run --flavor ") == list(CANONICAL_FLAVORS)
