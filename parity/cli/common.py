"""One command-line vocabulary for every command of ``parity`` and
``parity run`` (docs/cli.md).

A command adopts it in three steps::

    p = sub.add_parser("fuzz", help="...")              # sub from a cli_common.Parser: same error handling
    add_options(p, only="configs", flavor=True, jobs=True, json=True)
    ...
    def cmd_fuzz(args) -> int:
        try:
            families, flavors, engines = select(args)     # --only / --flavor checked: ValueError, ConfigError
        except (ConfigError, ValueError) as exc:
            return die(str(exc))                         # "error: ..." on stderr, exit 2
        with progress("fuzz") as cb:                     # a bar on a terminal, nothing when piped
            ...
        return finish(args, "fuzz", green, data)         # --json PATH (the versioned envelope), exit 0 / 1

The shared rules:

* ``--only X[,X...]``: families or ``FAMILY/NAME`` configs for the commands
  that run configs; layer names for the commands that run catalog layers
  (``emit``, ``layers``); families or ``FAMILY/LABEL`` jobs for ``aot``.
  Unknown names are an input error (exit 2) that lists the known ones.
* ``--flavor F``: a canonical flavor or an alias (``llvm24`` -> ``llvm23``);
  an unknown flavor is an input error.
* ``--jobs/-j N``: an integer from 1 to 1024 (default: the CPU count); ``0`` is refused; the
  workers started are at most 4 per CPU (:func:`machine_jobs`) whatever N says.
* ``--json PATH``: checked writable before the run; written once at the end
  with :func:`report_doc`'s envelope.
* exit status: :data:`EXIT_GREEN` 0, :data:`EXIT_RED` 1, :data:`EXIT_USAGE` 2
  (bad arguments or input; nothing was run or written).
* errors: one line on stderr starting ``error: `` (argparse's own errors too).
"""
from __future__ import annotations

import argparse
import errno
import json
import math
import os
import stat
import re
import subprocess
import tempfile
import sys
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import Iterator
from dataclasses import replace
import importlib.metadata as md
from parity.cli.color import enabled as color_enabled
from parity.llvm import compile_cache
from parity.config import DEFAULT_ENGINES, DEFAULT_TIMEOUT, ConfigError, DEFAULT_PACKAGE, load_families
from parity.base.escape import shown
from parity.base.project import golden_dir_holding, outside_checkout_note
from parity.base.outputs import STDOUT, open_fifo, write_report, written_in_place
from parity.base.suggest import did_you_mean
from parity.base.engine_import import EngineImportError, engine_import_error, import_engine
from parity.cli.report_paths import report_paths_error  # noqa: F401 - re-exported for parity/app/main.py
from parity.cli.parser import ERROR_PREFIX, EXIT_GREEN, EXIT_RED, EXIT_USAGE, Once, Parser, one_line  # noqa: F401

#: The JSON report envelope (docs/cli.md#json). Bump SCHEMA_VERSION when a key
#: of the envelope or of a command's documented payload changes meaning or goes away.
SCHEMA = "splitk-parity/cli-report"
SCHEMA_VERSION = 1


# -- parser ------------------------------------------------------------------------------

# Parser (one-line usage errors), the exit codes and one_line live in parity/cli/parser.py,
# which imports neither engine (bench scripts that import an engine from another tree use it).


_RST = [(re.compile(r":(?:mod|func|class|data|meth|attr):`~?([^`]+)`"), r"\1"),
        (re.compile(r"``([^`]+)``"), r"\1"),
        (re.compile(r"`([^`]+)`_?"), r"\1")]


def plain(text: str) -> str:
    """``text`` (a docstring) without reStructuredText markup, for --help."""
    for rx, rep in _RST:
        text = rx.sub(rep, text)
    return text


# -- option types -------------------------------------------------------------------------

#: An integer option's text: ASCII digits with an optional sign, at most 18 digits.
_ASCII_INT = re.compile(r"[+-]?[0-9]{1,18}")


#: The largest integer an option takes (18 digits); a longer one is out of range.
INT_MAX = 10 ** 18 - 1
_LONG_INT = re.compile(r"[+-]?[0-9]{19,}")


def ascii_int_value(text: str) -> int | None:
    """The integer ``text`` spells in ASCII decimal (optional sign, at most 18
    digits, nothing else), or None. Python's ``int()`` also takes non-ASCII
    digits (``'١٢'``), ``_`` separators and spaces; no option of ours does."""
    return int(text, 10) if isinstance(text, str) and _ASCII_INT.fullmatch(text) else None


def integer(flag: str, lo: int | None = None, hi: int | None = None):
    """argparse type for the integer option ``flag``: ASCII decimal digits
    only (:func:`ascii_int_value`), in ``lo..hi`` when given; the error names
    the flag and shows the text escaped (parity.base.escape.shown)."""
    def parse(text: str) -> int:
        v = ascii_int_value(text)
        if v is None and _LONG_INT.fullmatch(text):  # 19 digits or more: the range, not "an integer"
            low = lo if lo is not None else -INT_MAX
            raise argparse.ArgumentTypeError(f"{flag} must be from {low} to {hi if hi is not None else INT_MAX}, "
                                             f"got '{shown(text, limit=40)}' ({len(text.lstrip('+-'))} digits)")
        if v is None:
            raise argparse.ArgumentTypeError(f"{flag} wants an integer, got '{shown(text)}' "
                                             "(ASCII digits, optional sign)")
        if lo is not None and v < lo:
            raise argparse.ArgumentTypeError(f"{flag} must be at least {lo}, got {v}")
        if hi is not None and v > hi:
            raise argparse.ArgumentTypeError(f"{flag} must be at most {hi}, got {v}")
        return v
    return parse


def integer_list(flag: str, lo: int | None = 1):
    """argparse type for ``flag``: comma-separated integers (ASCII digits), each at least ``lo``
    when given (default 1); returns ``list[int]``. A bad item is one argparse error naming ``flag``
    and the text, escaped."""
    def parse(text: str) -> list[int]:
        values = [ascii_int_value(t) for t in text.split(",")]
        if any(v is None or (lo is not None and v < lo) for v in values):
            want = f"integers of at least {lo}" if lo is not None else "integers"
            raise argparse.ArgumentTypeError(f"{flag} wants {want} separated by commas, got '{shown(text)}'")
        return values
    return parse


def nonempty(flag: str, what: str, items: bool = False):
    """argparse type for ``flag``: a text that is not empty or blank (``what`` says what to
    give); with ``items``, a comma list none of whose items is empty (``--assume a=b,,``).
    An empty value was taken as no value at all (``--since ''`` measured from HEAD,
    ``--assume ''`` assumed nothing)."""
    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"empty (give {what})")
        if items and any(not t.strip() for t in text.split(",")):
            raise argparse.ArgumentTypeError(f"an empty item in '{shown(text)}' (give {what})")
        return text
    return parse


def at_least_one(flag: str):
    """argparse type for ``flag``: an integer >= 1 in ASCII digits (the error names the flag)."""
    return integer(flag, lo=1)


#: A number of seconds: ASCII decimal, optional fraction and exponent (float() alone also takes
#: non-ASCII digits, ``_`` separators, spaces, ``inf`` and ``nan``).
_ASCII_DECIMAL = re.compile(r"[+-]?(?:[0-9]{1,18}(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")


#: The most seconds a seconds option takes (about 11.6 days): a wait past it cannot be meant,
#: and the waits below overflow soon after (``poll`` takes an int of milliseconds, about
#: 2.1e6 s; ``--timeout 1e9`` was "OverflowError: timeout is too large").
MAX_SECONDS = 10 ** 6


def finite_seconds(flag: str):
    """argparse type for ``flag``: a finite number of seconds > 0 and at most
    :data:`MAX_SECONDS`, in ASCII decimal (the error names the flag and the rule)."""
    def parse(text: str) -> float:
        v = float(text) if _ASCII_DECIMAL.fullmatch(text) else math.nan
        if not math.isfinite(v) or v <= 0:
            raise argparse.ArgumentTypeError(f"{flag} must be a finite number of seconds > 0 (ASCII decimal), "
                                             f"got '{shown(text)}'")
        if v > MAX_SECONDS:
            raise argparse.ArgumentTypeError(f"{flag} must be at most {MAX_SECONDS} seconds (1e6), "
                                             f"got '{shown(text)}'")
        return v
    return parse


#: ``--jobs`` at most: the pools start no more workers than they have work items, but a
#: typo (``-j 99999999``) forked past the machine's process limit (a fork storm, then a hang).
MAX_JOBS = 1024
#: The workers a command starts per CPU at most: ``--jobs`` above ``JOBS_PER_CPU x os.cpu_count()``
#: starts that many (``-j 1024`` started 1024 workers of ~40 MB each, past the machine's memory).
JOBS_PER_CPU = 4


def machine_jobs() -> int:
    """The most workers any pool starts on this machine: :data:`JOBS_PER_CPU` per CPU."""
    return JOBS_PER_CPU * (os.cpu_count() or 1)


_jobs_option = integer("--jobs", lo=1, hi=MAX_JOBS)


def positive_int(text: str) -> int:
    """argparse type of --jobs (every command's, the one place every pool's size comes from): an
    integer from 1 to :data:`MAX_JOBS`, then capped by the machine (:func:`machine_jobs`)."""
    return min(_jobs_option(text), machine_jobs())


#: argparse type of --timeout: a finite number of seconds > 0.
positive_seconds = finite_seconds("--timeout")


def check_writable(path: str | Path, flag: str = "--json", ours=None) -> None:
    """ValueError (naming ``flag``) unless ``path`` can be written as a file (checked
    before a long run, so a bad --json path does not waste the run). An existing
    regular file is replaced only when it is empty or an earlier report of this
    tool (``ours(fh)`` of the file open for reading; default: its ``"tool": "splitk-parity"``
    field): a golden shard, a catalog or any other file named by mistake is refused,
    never overwritten. Nothing is written in or below a golden directory; an existing
    FIFO with no reader (the write would block after the run), a socket or a block
    device is refused too. Every report option (--json, --junit, --annotations,
    --record-costs) is checked here."""
    if isinstance(path, str) and not path:  # Path("") is ".", which read as "is a directory"
        raise ValueError(f"{flag} '': empty path (give a file name)")
    if path == STDOUT:  # `--json -`: stdout (json_on_stdout), never a file named "-"
        if flag == "--json":
            return
        raise ValueError(f"{flag} -: stdout carries the command's text (only --json - goes there); "
                         "give a file name")
    try:
        _check_writable(Path(path), shown(str(path)), flag, ours or _is_report)
    except OSError as exc:  # a name too long, a symlink loop, ...
        raise ValueError(f"{flag} {shown(str(path))}: cannot be used ({exc.strerror or exc})") from None


REPORT_MARK = '"tool": "splitk-parity"'


def _is_report(fh) -> bool:
    """The file open as ``fh`` (binary) is a JSON report this tool wrote."""
    head = fh.read(1)
    return head == b"{" and REPORT_MARK.encode() in head + fh.read()


def _is_ours_or_empty(p: Path, ours) -> bool:
    """``p`` (an existing regular file) is empty or ``ours(fh)`` says this tool wrote it."""
    if p.stat().st_size == 0:
        return True
    with open(p, "rb") as fh:
        return bool(ours(fh))


def _special_file_error(p: Path) -> str | None:
    """Why the existing non-regular file ``p`` cannot take a report, or None (a character
    device such as /dev/null or a terminal; a FIFO with a reader)."""
    mode = p.stat().st_mode
    if stat.S_ISSOCK(mode):
        return "is a socket, not a file"
    if stat.S_ISBLK(mode):
        return "is a block device, not a file (never written)"
    if stat.S_ISFIFO(mode):
        try:  # no reader: ENXIO now, where the real open would block after the run; else held open
            open_fifo(p)
        except OSError as exc:
            if exc.errno == errno.ENXIO:
                return "is a named pipe (FIFO) with no reader (the write would block); start the reader first"
            raise
    return None


def _check_writable(p: Path, path: str, flag: str, ours) -> None:
    if p.is_dir():
        raise ValueError(f"{flag} {path}: is a directory")
    if written_in_place(p):  # /dev/stdout, /dev/null, a FIFO: written in place (write_report)
        why = _special_file_error(p) if p.exists() else None
        if why:
            raise ValueError(f"{flag} {path}: {why}")
        if not os.access(p, os.W_OK):
            raise ValueError(f"{flag} {path}: not writable")
        return
    p = Path(os.path.realpath(p))  # a symlink to a file: the file is replaced, the link stays
    if not p.parent.is_dir():
        what = "is not a directory" if p.parent.exists() else "does not exist"
        raise ValueError(f"{flag} {path}: directory {p.parent} {what}")
    gold = golden_dir_holding(p)
    if gold is not None:   # a new FAMILY.json there would be read as a shard; nothing goes into golden/
        raise ValueError(f"{flag} {path}: is in a golden directory ({gold}); reports go elsewhere")
    if p.is_file() and not _is_ours_or_empty(p, ours):
        raise ValueError(f"{flag} {path}: exists and is not a splitk-parity report "
                         f"(a golden shard, catalog or other file is never overwritten)")
    if not os.access(p.parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise ValueError(f"{flag} {path}: not writable")
    try:  # os.access says yes to root for /proc or a read-only mount: create what write_json creates
        fd, probe = tempfile.mkstemp(prefix=f".{p.name}.probe", dir=p.parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ValueError(f"{flag} {path}: not writable ({exc.strerror or exc})") from None


def writable_file(flag: str):
    """argparse type for ``flag``: a file path :func:`check_writable` accepts (the error
    names ``flag`` through argparse)."""
    def parse(text: str) -> str:
        try:
            check_writable(text, flag)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)[len(flag) + 1:]) from None  # argparse names the flag
        return text
    return parse


#: argparse type of --json: a writable file path.
json_path = writable_file("--json")


def configured_families(args):
    """A callable giving the names of the families ``args.configs`` (default: the shipped
    configs) holds, for :func:`parity.base.project.resolve_golden_dir` (a corrupt shard of
    one of them still makes a golden directory); no names when the configs do not load
    (the command reports that itself)."""
    def names() -> list[str]:
        try:
            return [f.name for f in load_families(getattr(args, "configs", None) or DEFAULT_PACKAGE)]
        except (ConfigError, ImportError, OSError, ValueError, SyntaxError):
            return []
    return names


@contextmanager
def json_on_stdout(args) -> Iterator[None]:
    """Run a command whose ``--json`` is ``-``: the JSON report goes to stdout alone
    (:func:`parity.base.outputs.write_report` writes ``-`` there), the command's text
    (the provenance line too) to stderr. ``parity review`` keeps its own ``--json -``
    (parity/golden/review.py); any other value changes nothing. Before, ``--json -``
    wrote a file named ``-`` in the working directory."""
    if getattr(args, "json", None) != STDOUT or getattr(args, "command", None) == "review":
        yield
        return
    sys.stdout.flush()
    with redirect_stdout(sys.stderr):
        yield


def jobs_of(args) -> int:
    """The worker count of ``args.jobs`` (None: the CPU count), at most :func:`machine_jobs`."""
    return min(getattr(args, "jobs", None) or os.cpu_count() or 1, machine_jobs())


ONLY_HELP = {
    "configs": "only these families or FAMILY/NAME configs (comma-separated); also a family token "
               "(conv: every family with that _-separated token) and an arch (gfx1250: its configs), "
               "the two kinds intersecting (docs/cli.md)",
    "layers": "only these layers of the catalog (comma-separated names)",
    "jobs": "only these families or FAMILY/LABEL jobs of the grid (comma-separated)",
}


def add_options(p: argparse.ArgumentParser, *, only: str | None = "configs", flavor: bool = True,
                flavor_default: str | None = None, jobs: bool = True, json: bool = True,
                timeout: bool = True, engines: bool = True) -> None:
    """Add the shared options to a command's parser.

    ``only``: what ``--only`` selects ("configs", "layers", "jobs" or None for
    no --only); ``flavor_default``: the flavor when --flavor is not given
    (None: every canonical flavor); ``engines``: the hidden --engines/--configs
    injection options of the gate's tests."""
    if only:
        p.add_argument("--only", metavar="X[,X...]", action=Once, help=ONLY_HELP[only])
        p.set_defaults(only_kind=only)
    if flavor:
        p.add_argument("--flavor", metavar="F", default=flavor_default, action=Once,
                       help=(f"flavor (default {flavor_default}; " if flavor_default else
                             "only this flavor (default: every canonical flavor; ")
                       + "aliases such as llvm24 resolve to their canonical flavor)")
    if jobs:
        p.add_argument("--jobs", "-j", type=positive_int, default=None, metavar="N", action=Once,
                       help="worker processes, 1 to 1024, at most 4 per CPU started (default: the CPU count)")
    if json:
        p.add_argument("--json", metavar="PATH", type=json_path, action=Once,
                       help="also write the result as JSON to PATH (schema: docs/cli.md)")
    if timeout:
        p.add_argument("--timeout", type=positive_seconds, default=DEFAULT_TIMEOUT, metavar="S",
                       help=f"per-config timeout in seconds (default {DEFAULT_TIMEOUT:g})")
    if engines:
        # development / test injection (not part of the user surface)
        p.add_argument("--engines", default=",".join(DEFAULT_ENGINES), help=argparse.SUPPRESS)
        p.add_argument("--configs", default=DEFAULT_PACKAGE, help=argparse.SUPPRESS)


class _NoCompileCache(argparse.Action):
    """``--no-compile-cache``: turns the compile cache off (PARITY_COMPILE_CACHE=off) for
    this process and the workers it starts, when the option is parsed."""

    def __init__(self, option_strings, dest, **kw):
        super().__init__(option_strings, dest, nargs=0, default=False, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, True)
        compile_cache.disable()


def add_compile_cache_option(p: argparse.ArgumentParser) -> None:
    """``--no-compile-cache`` on a command that compiles with LLVM (docs/verify.md, "The compile cache")."""
    p.add_argument("--no-compile-cache", action=_NoCompileCache,
                   help="compile every module afresh: neither read nor write the compile cache "
                        "(as PARITY_COMPILE_CACHE=off; docs/verify.md)")


# -- --only ------------------------------------------------------------------------------

def split_csv(s: str | None) -> list[str] | None:
    if s is None:
        return None
    return [p.strip() for p in s.split(",") if p.strip()]


def parse_only(text: str | None, package: str | None = DEFAULT_PACKAGE,
               ) -> tuple[list[str] | None, dict[str, set[str]]]:
    """``--only`` -> (family names or None for all, {family: config names} for
    the families narrowed to some configs; a family given whole is not in the dict).
    ValueError when the list names nothing or an item is malformed.

    Besides exact ``FAMILY`` and ``FAMILY/NAME`` items, the reference harness's
    selectors (docs/cli.md, "--only selectors"), resolved against the families of
    ``package`` (None: exact names only, as ``aot``'s jobs need):

    * a family token: ``conv`` selects every family whose name has it as a
      ``_``-separated token (conv_abi, conv_implicit_gemm, ...);
    * an arch: ``gfx1250`` selects the configs built for it (``Config.arch``).

    Items of one kind add up (family items: union of families and configs; arch
    items: union of arches); the two kinds intersect: ``conv,gfx1250`` is the
    gfx1250 configs of the conv families, ``gfx1250`` alone those of every family.
    ConfigError when arch items leave no config. An item that is none of these is
    kept as a family name, so the family loader refuses it with the known names."""
    items = split_csv(text)
    if items is None:
        return None, {}
    if not items:
        raise ValueError("--only names nothing (give X[,X...])")
    for it in items:
        fam, sep, name = it.partition("/")
        if not fam or (sep and not name) or "/" in name:
            raise ValueError(f"--only: {it!r} is neither FAMILY nor FAMILY/NAME")
    plain = [it for it in items if "/" not in it]
    if package is None or not plain:
        return _exact_only(items)
    known = {f.name: f for f in load_families(package)}
    if all(it in known for it in plain):
        return _exact_only(items)
    return _selected(items, known)


def _exact_only(items: list[str]) -> tuple[list[str], dict[str, set[str]]]:
    """(families, {family: configs}) of exact FAMILY and FAMILY/NAME items."""
    fams: list[str] = []
    names: dict[str, set[str]] = {}
    whole: set[str] = set()
    for it in items:
        fam, sep, name = it.partition("/")
        if fam not in fams:
            fams.append(fam)
        if sep:
            names.setdefault(fam, set()).add(name)
        else:
            whole.add(fam)
    for fam in whole:
        names.pop(fam, None)
    return fams, names


def _selected(items: list[str], known: dict) -> tuple[list[str], dict[str, set[str]]]:
    """:func:`parse_only` for items holding family tokens or arches (``known``: {name: Family})."""
    arches = {c.arch for f in known.values() for c in f.configs}
    family_items, arch_items = [], set()
    for it in items:
        if "/" in it or it in known:
            family_items.append(it)
        elif it in arches:
            arch_items.add(it)
        else:
            matched = [n for n in sorted(known) if it in n.split("_")]
            family_items += matched or [it]  # no match: the loader names it unknown
    fams, names = _exact_only(family_items) if family_items else (sorted(known), {})
    if not arch_items or any(f not in known for f in fams):
        return fams, names
    out_fams: list[str] = []
    out_names: dict[str, set[str]] = {}
    for fam in fams:
        picked = {c.name for c in known[fam].configs
                  if c.arch in arch_items and (fam not in names or c.name in names[fam])}
        if not picked:
            continue
        out_fams.append(fam)
        if picked != {c.name for c in known[fam].configs}:
            out_names[fam] = picked  # narrowed: a whole family stays whole (its golden shard checked whole)
    if not out_fams:
        raise ConfigError(f"--only {','.join(items)}: no config of the selected families is built for "
                          f"{', '.join(sorted(arch_items))}")
    return out_fams, out_names


def check_only(args) -> str | None:
    """The error of a ``--only`` that selects configs (unknown family or config,
    malformed item), or None: lets a command refuse it before printing anything."""
    if (getattr(args, "only_kind", None) != "configs" or getattr(args, "only", None) is None
            or getattr(args, "configs", None) is None):  # commands with their own --only (numerics plans)
        return None
    try:
        fams, names = parse_only(args.only, args.configs)
        select_configs(load_families(args.configs, only=fams), names)
    except (ConfigError, ValueError) as exc:
        return str(exc)
    return None


def select_configs(families: list, names: dict[str, set[str]]) -> list:
    """``families`` with the configs of ``names`` ({family: config names}) only, marked
    ``selection`` (parity/config.py ``Family``); ConfigError for a name no family holds."""

    out = []
    for fam in families:
        want = names.get(fam.name)
        if want is None:
            out.append(fam)
            continue
        known = {c.name for c in fam.configs}
        unknown = sorted(want - known)
        if unknown:
            shown = ", ".join(sorted(known)[:8]) + (f", ... ({len(known)} configs)" if len(known) > 8 else "")
            hint = did_you_mean(unknown[0], known) if len(unknown) == 1 else ""
            raise ConfigError(f"--only: no config {', '.join(f'{fam.name}/{u}' for u in unknown)}{hint} "
                              f"(known in {fam.name}: {shown or 'none'})")
        # a selection is a strict subset: naming every config of a family is the family (its
        # whole-family rule "some config IDENTICAL at each flavor" still applies)
        out.append(replace(fam, configs=tuple(c for c in fam.configs if c.name in want), selection=want != known))
    return out


def only_names(args) -> dict[str, set[str]]:
    """{family: config names} of the FAMILY/NAME items of ``args.only``."""
    return parse_only(getattr(args, "only", None), getattr(args, "configs", None) or DEFAULT_PACKAGE)[1]


# -- progress ----------------------------------------------------------------------------

@contextmanager
def progress(label: str, total: int | None = None) -> Iterator:
    """A progress callback ``cb(done, total)`` drawing a rich bar on stderr --
    only when stderr is a terminal; ``None`` otherwise (piped, redirected, CI
    logs), so callers write ``if cb: cb(done, total)``."""
    if not sys.stderr.isatty():
        yield None
        return
    try:
        from rich.console import Console  # rich: only when drawing on a terminal
        # rich: only when drawing on a terminal
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    except ImportError:
        yield None
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True, no_color=not color_enabled(sys.stderr)), transient=True) as p:
        task = p.add_task(label, total=total)
        yield lambda done, total=total: p.update(task, completed=done, total=total)


# -- version -----------------------------------------------------------------------------

def package_version() -> str:
    """The installed splitk-parity version (pyproject's when run from a source tree)."""
    try:
        return md.version("splitk-parity")
    except md.PackageNotFoundError:
        pp = Path(__file__).resolve().parents[2] / "pyproject.toml"
        m = re.search(r'^version\s*=\s*"([^"]+)"', pp.read_text(encoding="utf-8"), re.M) if pp.is_file() else None
        return m.group(1) if m else "unknown"


def version_text(prog: str) -> str:
    """``<prog> <version>`` and where the engines come from (one line)."""
    parts = [f"{prog} {package_version()}"]
    try:
        import cpp_engine  # cpp_engine: its import rebuilds the C++ library and can fail (parity/base/stale.py)
        parts.append(f"cpp_engine library {cpp_engine.version()} ({cpp_engine.library_path()})")
    except Exception as e:  # noqa: BLE001 - --version must not fail on an unbuilt library
        parts.append(f"cpp_engine unavailable ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})")
    try:
        import python_engine  # python_engine: may not import (a conflict marker): --version still answers
        parts.append(f"python_engine {Path(python_engine.__file__).resolve().parent}")
    except Exception as e:  # noqa: BLE001 - SyntaxError included: --version never fails on the engines
        parts.append(engine_import_error("python", e))
    return "; ".join(parts)


class _VersionAction(argparse.Action):
    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0,
                         help=help or "print the version and where the engines are loaded from, then exit")

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text(parser.prog.split()[0] if parser.prog.split()[0] != "python" else "python_engine"))
        parser.exit(EXIT_GREEN)


def add_version(p: argparse.ArgumentParser) -> None:
    p.add_argument("--version", action=_VersionAction)


# -- results -----------------------------------------------------------------------------

def die(msg: str, code: int = EXIT_USAGE) -> int:
    """Print ``error: <msg>`` on stderr as one line; return ``code`` (default 2, usage / input).

    Callers pass names from outside through :func:`parity.base.escape.shown`; as a
    last guard any line break, control, separator or surrogate left in ``msg``
    is escaped here too (backslashes are kept, so text already escaped is not
    escaped twice)."""
    print(f"{ERROR_PREFIX}{one_line(msg)}", file=sys.stderr)
    return code


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``"1 layer"``, ``"2 layers"``, ``"0 layers"``: ``n`` and ``noun`` in the number ``n``
    asks for (``plural``, default ``noun + "s"``, for any ``n`` but 1)."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def report_doc(command: str, result: str, payload: dict | None = None) -> dict:
    """The JSON report of one command run: the envelope (schema, schema_version,
    tool, command, version, result, exit_code) merged over the command's
    payload (docs/cli.md lists each command's keys). ``result`` is GREEN, RED
    or INCOMPLETE (a skipped verify lane: exit 1)."""
    if result not in ("GREEN", "RED", "INCOMPLETE"):
        raise ValueError(f"result must be GREEN, RED or INCOMPLETE, got {result!r}")
    doc = dict(payload or {})
    doc.update(schema=SCHEMA, schema_version=SCHEMA_VERSION, tool="splitk-parity", command=command,
               version=package_version(), result=result,
               exit_code=EXIT_GREEN if result == "GREEN" else EXIT_RED)
    return doc


def write_json(path: str | Path, doc: dict) -> None:
    """Write ``doc`` as sorted, indented JSON to ``path`` (:func:`parity.base.outputs.write_report`:
    atomically, or in place for a device, FIFO or a path under /dev or /proc)."""
    write_report(path, json.dumps(doc, indent=2, sort_keys=True) + "\n")


def finish(args, command: str, result: str | bool, payload: dict | None = None) -> int:
    """Write ``--json`` (when given) and return the exit status of ``result``
    (True / "GREEN" -> 0, anything else -> 1)."""
    if isinstance(result, bool):
        result = "GREEN" if result else "RED"
    path = getattr(args, "json", None)
    if path:
        try:
            write_json(path, report_doc(command, result, payload))
        except OSError as exc:  # full disk, file-size limit, a path gone since the check
            if path == STDOUT and exc.errno == errno.EPIPE:  # `--json - | head -c 10`: as `parity list | head`
                raise BrokenPipeError(errno.EPIPE, exc.strerror) from None  # run_quietly_on_broken_pipe: 141
            return die(f"--json {shown(path)}: cannot write: {shown(exc.strerror or exc)}")
    return EXIT_GREEN if result == "GREEN" else EXIT_RED


def note_outside_checkout() -> None:
    """Say in one stderr line when the working directory is in no checkout."""
    msg = outside_checkout_note()
    if msg:
        print(msg, file=sys.stderr)


def git_commit(flag: str, repo: Path | None = None):
    """argparse type for ``flag``: a git ref of ``repo`` (default: this checkout) that names a
    commit; returns the full sha. A ref git does not know is one argparse error naming ``flag``
    (the benchmarks check it before they build anything). argparse names the flag."""
    def parse(text: str) -> str:
        top = repo or Path(__file__).resolve().parents[2]
        try:
            r = subprocess.run(["git", "-C", str(top), "rev-parse", "--verify", "--quiet", f"{text}^{{commit}}"],
                               capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as exc:
            raise argparse.ArgumentTypeError(f"git could not be run ({exc.__class__.__name__})")
        if r.returncode or not r.stdout.strip():
            raise argparse.ArgumentTypeError(f"{text!r} names no commit of {top}")
        return r.stdout.strip()
    return parse


def name_list(flag: str, known, what: str, single: bool = False):
    """argparse type for ``flag``: comma-separated names, each one of ``known`` (a sequence,
    or a function giving it, called at parse time); returns the text unchanged. An empty,
    unknown or repeated name (or, with ``single``, more than one) is one argparse error
    (argparse names ``flag``) listing the known ``what`` names."""
    def parse(text: str) -> str:
        names = [n.strip() for n in text.split(",")]
        ok = tuple(known() if callable(known) else known)
        bad = next((n for n in names if n not in ok), None)
        if bad is not None or len(set(names)) < len(names) or (single and len(names) > 1):
            why = (f"unknown {what} '{shown(bad)}'" if bad else "one name only" if single and len(set(names)) > 1
                   else "a name given twice")
            raise argparse.ArgumentTypeError(f"{why} in '{shown(text)}' (known: {', '.join(ok)})")
        return text
    return parse


def flavor_list(flag: str, single: bool = False):
    """argparse type for ``flag``: LLVM flavor names (aliases too: ``llvm24``), comma-separated
    (``single``: exactly one); see :func:`name_list`."""
    def names() -> list[str]:  # the engine only when the option is parsed (parity --help starts without it)
        try:
            engine = import_engine("python")
        except EngineImportError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return [f["name"] for f in engine.flavor_table()]
    return name_list(flag, names, "flavor", single)


def family_list(flag: str):
    """argparse type for ``flag``: comma-separated family names of the shipped configs; returns
    the text unchanged. An unknown or empty name is one argparse error naming ``flag``."""
    def parse(text: str) -> str:
        names = text.split(",")
        if any(not n for n in names):
            raise argparse.ArgumentTypeError(f"an empty family name in {text!r}")
        try:
            load_families(only=names)
        except ConfigError as exc:
            raise argparse.ArgumentTypeError(str(exc))
        return text
    return parse
