#!/usr/bin/env python3
"""Lint of the example CI files (examples/ci/; docs/ci.md, "Example CI files").

    python scripts/lint_ci_examples.py [FILE...]     (default: examples/ci/*.yml)

Each file is parsed with PyYAML (the libyaml loader, ``yaml.CSafeLoader``, when PyYAML
was built with it) into its node tree, so every finding names a line. A file whose name
holds ``gitlab`` is a ``.gitlab-ci.yml``, any other a GitHub Actions workflow.

Structure (what the CI service itself would refuse, or silently never run):

* GitHub: an ``on`` trigger; a non-empty ``jobs`` mapping; each job (other than a
  reusable-workflow call, ``uses:``) with ``runs-on`` and a non-empty ``steps`` list;
  each step with exactly one of ``run`` and ``uses``; every ``needs`` a job of the file.
* GitLab: ``stages`` a list (else GitLab's default stages); each job's ``stage``
  (default ``test``) declared there; ``script`` a list of strings; ``before_script`` /
  ``after_script`` lists when present.

Commands, in every ``run:`` / ``script:`` / ``before_script:`` line (a literal block line
by line, ``\\``-continued lines joined, shell words split at ``&& || ; |``):

* ``parity ...`` (also ``.venv/bin/parity`` and ``python -m parity``) is parsed by
  parity's own argparse parser (:func:`parity.app.main.build_parser`), in an empty
  directory: an unknown subcommand, an unknown option, a bad option value or a bad
  ``--shard`` is an error. A line is tried once per value of GitHub's ``${{ matrix.X }}``
  (every combination it names; any other ``${{ }}`` is the word ``EXPR``) and per GitLab
  ``$CI_NODE_INDEX`` (1 .. the job's ``parallel``; ``$CI_NODE_TOTAL`` is ``parallel``);
  a ``--shard I/N`` line must run every shard 1..N over them (``shard-coverage``: a
  matrix of 1, 2 for ``/3`` never checks a third of the configs).
* a ``scripts/...`` word, the file of ``bash FILE`` / ``sh FILE`` and of
  ``python FILE.py`` must exist in the checkout.

Every finding is one line ``error: FILE:LINE: RULE: what`` on stderr; exit 1 when there is
one, 2 when a file cannot be read or parsed as YAML (one line too), 0 and one ``ok:`` line
per file otherwise.
"""
from __future__ import annotations

import contextlib
import io
import itertools
import os
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as `python scripts/lint_ci_examples.py` from anywhere
    sys.path.insert(0, str(ROOT))

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML has it
GITLAB_KEYWORDS = {"default", "include", "stages", "variables", "workflow", "image", "services",
                   "cache", "before_script", "after_script"}
GITLAB_DEFAULT_STAGES = [".pre", "build", "test", "deploy", ".post"]
SHELL_OPERATORS = {"&&", "||", ";", "|", "&", "(", ")", ";;", "|&"}
REDIRECTIONS = {">", ">>", "<", ">&", "<&", "&>", ">|", "<<", "<<<", "&>>"}
SHELL_KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "time",
                  "exec", "{", "}", "command"}
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
GITHUB_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
MAX_VARIANTS = 64  # matrix combinations / parallel indexes tried per line
FD_PREFIX = re.compile(r"(?<![\w/.$-])\d+(?=[<>])")  # the 2 of `2>&1`: not a word of the command


@dataclass
class Lint:
    """The findings of one file: ``error: FILE:LINE: RULE: what`` lines."""
    path: Path
    shown: str
    errors: list[str] = field(default_factory=list)

    def error(self, line: int, rule: str, what: str) -> None:
        self.errors.append(f"error: {self.shown}:{line}: {rule}: {what}")


@dataclass
class Command:
    """One command line of a ``run:`` / ``script:`` entry, at its 1-based line."""
    line: int
    text: str


# -- YAML node helpers ---------------------------------------------------------

def line_of(node) -> int:
    """1-based line of ``node``."""
    return node.start_mark.line + 1


def items(node) -> list:
    """[(key text, key node, value node)] of a mapping node, [] for any other node."""
    if not isinstance(node, yaml.MappingNode):
        return []
    return [(k.value if isinstance(k, yaml.ScalarNode) else None, k, v) for k, v in node.value]


def get(node, key: str):
    """The value node of ``key`` in mapping ``node``, or None."""
    return next((v for name, _, v in items(node) if name == key), None)


def scalar_lines(node) -> list[Command]:
    """The command lines of a scalar node: a literal block (``|``) line by line, any other
    scalar as one line; lines continued with a backslash joined."""
    if not isinstance(node, yaml.ScalarNode):
        return []
    if node.style == "|":
        raw = [(line_of(node) + 1 + i, text) for i, text in enumerate(node.value.split("\n"))]
    else:
        raw = [(line_of(node), node.value.replace("\n", " "))]
    out: list[Command] = []
    pending: Command | None = None
    for number, text in raw:
        if pending is not None:
            pending.text += " " + text.strip()
        else:
            pending = Command(number, text.strip())
        if pending.text.endswith("\\"):
            pending.text = pending.text[:-1]
            continue
        if pending.text:
            out.append(pending)
        pending = None
    if pending is not None and pending.text:
        out.append(pending)
    return out


# -- commands ----------------------------------------------------------------

def simple_commands(text: str) -> list[list[str]]:
    """The simple commands of one shell line: words split as the shell would (quotes,
    comments), cut at the control operators, redirections and their targets dropped."""
    lexer = shlex.shlex(FD_PREFIX.sub("", text), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # an unclosed quote: the shell would refuse it too
        return [["<unparsable>", text]]
    out, words, skip = [], [], False
    for token in tokens:
        if skip:
            skip = False
        elif token in REDIRECTIONS:
            skip = True
        elif token in SHELL_OPERATORS:
            out.append(words)
            words = []
        else:
            words.append(token)
    out.append(words)
    return [w for w in (_strip_prefix(ws) for ws in out) if w]


def _strip_prefix(words: list[str]) -> list[str]:
    """``words`` without leading shell keywords and variable assignments."""
    i = 0
    while i < len(words) and (words[i] in SHELL_KEYWORDS or ASSIGNMENT.match(words[i])):
        i += 1
    return words[i:]


class ParityArgs:
    """Parses a ``parity`` argument list with the real parser, in an empty directory (the
    file options' checks see no file of the checkout); one parser per subcommand."""

    def __init__(self):
        self.parsers: dict = {}
        self._dir = tempfile.TemporaryDirectory(prefix="lint-ci-")  # removed with this object
        self.scratch = self._dir.name

    def problem(self, argv: list[str]) -> tuple[str | None, object]:
        """(None, the parsed namespace) when parity accepts ``argv``, else (its one-line error,
        ``error:`` dropped, None). A ``--shard`` value is checked as ``check`` checks it."""
        from parity.app.main import build_parser, command_of, reference_spelling
        argv = reference_spelling(list(argv))
        command = command_of(argv)
        if command not in self.parsers:
            self.parsers[command] = build_parser(command)
        err, here, args = io.StringIO(), os.getcwd(), None
        try:
            os.chdir(self.scratch)
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                args = self.parsers[command].parse_args(argv)
        except SystemExit as stop:
            if stop.code not in (0, None):
                lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
                return (lines[-1] if lines else f"exit {stop.code}").removeprefix("error: "), None
        finally:
            os.chdir(here)
        if command is None and not ({"-h", "--help", "--version"} & set(argv)):
            return "no parity subcommand", None
        if isinstance(getattr(args, "shard", None), str):
            from parity.aot.shard import ShardError, parse_shard
            try:
                parse_shard(args.shard)
            except ShardError as exc:
                return f"parity {command}: {exc}", None
        return None, args


def check_command(lint: Lint, cmd: Command, words: list[str], parity: ParityArgs):
    """The rules for one simple command (see the module doc); the parsed namespace of a
    ``parity`` command parity accepts, else None."""
    head = Path(words[0]).name
    argv = None
    if head == "parity":
        argv = words[1:]
    elif re.fullmatch(r"python3?(\.\d+)?", head) and len(words) > 1:
        if words[1] == "-m" and len(words) > 2 and words[2] == "parity":
            argv = words[3:]
        elif words[1].endswith(".py"):
            _need_file(lint, cmd, words[1])
    elif head in ("bash", "sh"):
        script = next((w for w in words[1:] if not w.startswith("-")), None)
        if script is not None:
            _need_file(lint, cmd, script)
    for word in words:  # `python scripts/x.py`, `bash scripts/x.sh` and any other mention
        if word.startswith("scripts/"):
            _need_file(lint, cmd, word)
    if argv is None:
        return None
    problem, args = parity.problem(argv)
    if problem is not None:
        lint.error(cmd.line, "parity-command", f"`parity {' '.join(argv)}`: {problem}")
    return args


def _need_file(lint: Lint, cmd: Command, name: str) -> None:
    if "$" in name:  # a path from a variable: not knowable here
        return
    if not (ROOT / name).is_file() and not any(e.startswith(f"error: {lint.shown}:{cmd.line}: missing-file: {name}")
                                               for e in lint.errors):
        lint.error(cmd.line, "missing-file", f"{name} (named in `{cmd.text}`) does not exist in the checkout")


def check_lines(lint: Lint, commands: list[Command], parity: ParityArgs, variants) -> None:
    """Every simple command of ``commands`` through :func:`check_command`, in each of the
    texts ``variants(text)`` gives (one per matrix value / parallel index); a fault is
    reported once per command, for the first variant that has it. A ``--shard I/N``
    command must run every shard 1..N over its variants (rule ``shard-coverage``)."""
    for cmd in commands:
        shards: dict[int, set] = {}  # simple command index -> {(I, N)} over the variants
        for text in variants(cmd.text):
            before = len(lint.errors)
            for i, words in enumerate(simple_commands(text)):
                if words[0] == "<unparsable>":
                    lint.error(cmd.line, "shell", f"unclosed quote in `{cmd.text}`")
                    continue
                args = check_command(lint, cmd, words, parity)
                if isinstance(getattr(args, "shard", None), str):
                    i_n = args.shard.split("/")
                    shards.setdefault(i, set()).add((int(i_n[0]), int(i_n[1])))
            if len(lint.errors) > before:
                break
        for runs in shards.values():
            _shard_coverage(lint, cmd, runs)


def _shard_coverage(lint: Lint, cmd: Command, runs: set) -> None:
    counts = sorted({n for _, n in runs})
    if len(counts) > 1:
        lint.error(cmd.line, "shard-coverage", f"`{cmd.text}` splits the check into {counts} shards at once")
        return
    missing = sorted(set(range(1, counts[0] + 1)) - {i for i, _ in runs})
    if missing:
        lint.error(cmd.line, "shard-coverage",
                   f"`{cmd.text}` never runs shard(s) {', '.join(map(str, missing))} of {counts[0]}: "
                   "that part of the check would not run")


# -- GitHub Actions ------------------------------------------------------------

def lint_github(lint: Lint, root, parity: ParityArgs) -> None:
    """The GitHub Actions rules (module doc) on the workflow's node tree ``root``."""
    if not any(name == "on" for name, _, _ in items(root)):
        lint.error(line_of(root), "github-on", "the workflow has no `on:` trigger")
    jobs = get(root, "jobs")
    if not items(jobs):
        lint.error(line_of(jobs if jobs is not None else root), "github-jobs", "`jobs:` is missing or empty")
        return
    names = {name for name, _, _ in items(jobs)}
    for name, key, job in items(jobs):
        if not isinstance(job, yaml.MappingNode):
            lint.error(line_of(key), "github-job", f"job {name} is not a mapping")
            continue
        for need in _scalars(get(job, "needs")):
            if need.value not in names:
                lint.error(line_of(need), "github-needs", f"job {name} needs {need.value}, which is no job here")
        if get(job, "uses") is not None:  # a reusable workflow call: no runner, no steps
            continue
        if get(job, "runs-on") is None:
            lint.error(line_of(key), "github-runs-on", f"job {name} has no `runs-on`")
        steps = get(job, "steps")
        if not isinstance(steps, yaml.SequenceNode) or not steps.value:
            lint.error(line_of(key), "github-steps", f"job {name} has no `steps` list")
            continue
        variants = _github_subst(job)
        for step in steps.value:
            kinds = [k for k in ("run", "uses") if get(step, k) is not None]
            if len(kinds) != 1:
                lint.error(line_of(step), "github-step",
                           f"a step of job {name} has {' and '.join(kinds) or 'neither run nor uses'}: want one")
            check_lines(lint, scalar_lines(get(step, "run")), parity, variants)


def _scalars(node) -> list:
    if isinstance(node, yaml.ScalarNode):
        return [node]
    if isinstance(node, yaml.SequenceNode):
        return [n for n in node.value if isinstance(n, yaml.ScalarNode)]
    return []


def _github_subst(job):
    """The variants of a line: ``${{ matrix.X }}`` -> each value of the job's matrix X (every
    combination of the X the line names, at most :data:`MAX_VARIANTS`); any other
    expression -> ``EXPR``."""
    matrix = get(get(job, "strategy"), "matrix")
    values = {name: [n.value for n in _scalars(v)] for name, _, v in items(matrix) if _scalars(v)}

    def variants(text: str) -> list[str]:
        used = sorted({m.group(1)[len("matrix."):] for m in GITHUB_EXPR.finditer(text)
                       if m.group(1).startswith("matrix.")} & set(values))
        out = []
        for combo in itertools.islice(itertools.product(*(values[u] for u in used)), MAX_VARIANTS):
            chosen = dict(zip(used, combo))

            def one(m, chosen=chosen):
                expr = m.group(1)
                return chosen.get(expr[len("matrix."):], "EXPR") if expr.startswith("matrix.") else "EXPR"
            out.append(GITHUB_EXPR.sub(one, text))
        return out
    return variants


# -- GitLab CI -----------------------------------------------------------------

def lint_gitlab(lint: Lint, root, parity: ParityArgs) -> None:
    """The GitLab CI rules (module doc) on the pipeline's node tree ``root``."""
    stages_node = get(root, "stages")
    if stages_node is None:
        stages = list(GITLAB_DEFAULT_STAGES)
    elif not isinstance(stages_node, yaml.SequenceNode) or len(_scalars(stages_node)) != len(stages_node.value):
        lint.error(line_of(stages_node), "gitlab-stages", "`stages:` is not a list of names")
        stages = []
    else:
        stages = [n.value for n in stages_node.value] + [".pre", ".post"]
    shared = _script_lines(lint, root, "before_script") + _script_lines(lint, get(root, "default"), "before_script")
    check_lines(lint, shared, parity, _gitlab_subst(None))
    jobs = [(n, k, v) for n, k, v in items(root) if n not in GITLAB_KEYWORDS and not str(n).startswith(".")]
    if not jobs:
        lint.error(line_of(root), "gitlab-jobs", "the pipeline has no job")
    for name, key, job in jobs:
        if not isinstance(job, yaml.MappingNode):
            lint.error(line_of(key), "gitlab-job", f"job {name} is not a mapping")
            continue
        stage = get(job, "stage")
        stage_name = stage.value if isinstance(stage, yaml.ScalarNode) else "test"
        if stage_name not in stages:
            lint.error(line_of(stage if stage is not None else key), "gitlab-stage",
                       f"job {name}'s stage {stage_name} is not declared in `stages:`")
        lines = []
        if get(job, "trigger") is None and get(job, "extends") is None:
            script = get(job, "script")
            if not isinstance(script, yaml.SequenceNode) or not script.value:
                lint.error(line_of(script if script is not None else key), "gitlab-script",
                           f"job {name}'s `script:` is not a list of commands")
        for part in ("before_script", "script", "after_script"):
            lines += _script_lines(lint, job, part)
        check_lines(lint, lines, parity, _gitlab_subst(get(job, "parallel")))


def _script_lines(lint: Lint, node, key: str) -> list[Command]:
    """The command lines of ``node``'s ``key`` list; a present non-list is an error
    (``script`` is reported by the caller)."""
    value = get(node, key)
    if value is None:
        return []
    if not isinstance(value, yaml.SequenceNode):
        if key != "script":
            lint.error(line_of(value), "gitlab-script", f"`{key}:` is not a list of commands")
        return []
    out = []
    for item in value.value:
        if not isinstance(item, yaml.ScalarNode):
            lint.error(line_of(item), "gitlab-script", f"an entry of `{key}:` is not a command string")
            continue
        out += scalar_lines(item)
    return out


def _gitlab_subst(parallel):
    """The variants of a line: ``$CI_NODE_INDEX`` -> 1 .. the job's ``parallel`` (a number; 1
    without), ``$CI_NODE_TOTAL`` -> ``parallel``."""
    total = parallel.value if isinstance(parallel, yaml.ScalarNode) and parallel.value.isdigit() else "1"

    def variants(text: str) -> list[str]:
        with_total = re.sub(r"\$\{?CI_NODE_TOTAL\}?", total, text)
        if not re.search(r"\$\{?CI_NODE_INDEX\}?", with_total):
            return [with_total]
        return [re.sub(r"\$\{?CI_NODE_INDEX\}?", str(i), with_total)
                for i in range(1, min(int(total), MAX_VARIANTS) + 1)]
    return variants


# -- main ----------------------------------------------------------------------

def lint_file(path: Path, parity: ParityArgs) -> tuple[Lint, bool]:
    """(findings, readable) of one example file."""
    try:
        shown = str(path.resolve().relative_to(ROOT))
    except ValueError:
        shown = str(path)
    lint = Lint(path, shown)
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"), Loader=LOADER)
    except (OSError, UnicodeDecodeError) as exc:
        lint.errors.append(f"error: {shown}: cannot read: {exc}")
        return lint, False
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{shown}:{mark.line + 1}" if mark is not None else shown
        lint.errors.append(f"error: {where}: yaml: {str(getattr(exc, 'problem', exc)).strip()}")
        return lint, False
    if not isinstance(root, yaml.MappingNode):
        lint.error(1, "yaml", "the file is not a mapping")
        return lint, True
    (lint_gitlab if "gitlab" in path.name.lower() else lint_github)(lint, root, parity)
    return lint, True


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    paths = [Path(a) for a in args] or sorted((ROOT / "examples" / "ci").glob("*.yml"))
    if not paths:
        print("error: lint_ci_examples: no example CI files under examples/ci/", file=sys.stderr)
        return 2
    parity, status = ParityArgs(), 0
    for path in paths:
        lint, readable = lint_file(path, parity)
        for line in lint.errors:
            print(line, file=sys.stderr)
        if not readable:
            status = max(status, 2)
        elif lint.errors:
            status = max(status, 1)
        else:
            print(f"ok: {lint.shown} ({'GitLab CI' if 'gitlab' in path.name.lower() else 'GitHub Actions'})")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
