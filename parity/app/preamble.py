"""What every gate command does first (``preamble``): refuse a bad ``--only``
or flavor, stop on a stale C++ build (parity/base/stale.py), stop ``check``,
``write`` and ``diff`` when the engines are not the checkout's
(parity/gate/provenance.py ``foreign_engines``; ``--allow-foreign-engines``), print
the provenance line (parity/gate/provenance.py; held until the command's first
output that is not an ``error:`` line, so a refused input prints that line
alone). Shared by ``parity`` (parity/app/main.py) and
``python -m parity.check_byte_identity``, below both.
"""

from __future__ import annotations

from pathlib import Path

from parity.base import stale
from parity.base.engine_import import EngineImportError, import_engine
from parity.cli.common import check_only, configured_families
from parity.config import CANONICAL_FLAVORS
from parity.base.outputs import print_first_on_stderr, print_first_on_stdout
from parity.cli.parser import ERROR_PREFIX
from parity.base.escape import shown
from parity.base.project import ProjectError, golden_dir_error, resolve_golden_dir
from parity.gate.provenance import foreign_engines, provenance_line
from parity.gate.report import canonical_flavor, die, parse_engines


#: Commands whose first line is the provenance line (parity/gate/provenance.py)
#: and that stop on a stale C++ build (parity/base/stale.py) before any verdict.
GATE_COMMANDS = {"check", "write", "list", "show", "diff", "verify", "numerics", "layers", "perf", "review"}


def preamble(args) -> int | None:
    """Stale-build check and provenance line; an exit status when the command must stop.
    An engine that does not import stops the command first (one line naming the file and
    line, parity/base/engine_import.py), then a bad ``--only`` is refused, so an input
    error prints nothing on stdout."""
    try:  # every gate command lowers kernels with it, and the configs import its tables
        import_engine("python")
    except EngineImportError as exc:
        return die(str(exc))
    bad_only = check_only(args)
    if bad_only:
        return die(bad_only)
    flavor = getattr(args, "flavor", None)
    # `parity layers --flavor F,G`: one report per flavor (parity/catalog/layers.py), each name checked
    flavors = flavor.split(",") if isinstance(flavor, str) and getattr(args, "command", None) == "layers" \
        else [flavor]
    for flavor in flavors:
        if isinstance(flavor, str) and flavor.strip() not in CANONICAL_FLAVORS:
            try:  # an alias resolves through the engine's table; an unknown name stops here
                canonical_flavor(flavor.strip(), "python", getattr(args, "timeout", 30.0))
            except ValueError as exc:
                return die(str(exc))
    engines = getattr(args, "engines", "python,cpp")
    try:
        names = parse_engines(engines)
    except (SystemExit, ValueError):
        names = ()
    command = getattr(args, "command", None)
    # the engines the command really runs: a C++ build error must not stop Python-only work
    if command == "show":
        names = (getattr(args, "engine", "python"),)
    elif command == "diff" and getattr(args, "base", None) is not None:
        names = ("python",)  # REF's and the working tree's Python engines
    elif command == "perf":
        names = ("python",)  # perf lowers with the Python engine only (the gate pins both to one text)
    if "cpp" in names or getattr(args, "command", None) in ("numerics", "layers"):
        msg = stale.check_cpp_build()
        if msg:
            return die(msg)
        stale.mark_checked()  # workers skip the import-time rebuild
    try:
        gdir = resolve_golden_dir(getattr(args, "golden_dir", None), families=configured_families(args))
    except ProjectError as exc:
        if command == "review" and getattr(args, "golden_dir", None) is not None:
            return die(str(exc))  # DIR is what is wrong (before: "needs a git checkout", inside one)
        if command == "review" or (command == "diff" and getattr(args, "base", None) is not None):
            # the old IR comes from a git ref of the checkout: --golden-dir (which `diff` does not
            # even take) cannot stand in for one, so the line does not offer it
            what = "parity review" if command == "review" else "parity diff --base"
            return die(f"{what} needs a splitk-parity git checkout at or above {shown(Path.cwd())} "
                       "(the old IR comes from a git ref of it); run it inside a checkout")
        if command in ("check", "write") or getattr(args, "base", None) is not None:
            return die(golden_dir_error(exc, command, getattr(args, "golden_dir", None)))
        gdir = None
    if command in ("check", "write", "diff", "review") and not getattr(args, "allow_foreign_engines", False):
        msg = foreign_engines(gdir, names or ("python", "cpp"))
        if msg:
            return die(msg)
    # show, the engine-vs-engine diff and the markdown page write IR / a patch / a page on stdout:
    # provenance goes to stderr
    command = getattr(args, "command", "check_byte_identity")
    text_out = command == "show" or (command == "diff" and (getattr(args, "base", None) is None
                                                           or getattr(args, "format", "text") == "markdown"))
    text_out = text_out or (command == "review" and getattr(args, "json", None) == "-")  # JSON on stdout
    line = provenance_line(gdir, names or ("python", "cpp"))
    if text_out:  # held until the command prints: an input error is its one `error:` line alone
        print_first_on_stderr(line, ERROR_PREFIX)
    else:  # first on stdout, and only once the command prints: an input error leaves stdout empty
        print_first_on_stdout(line)
    return None
