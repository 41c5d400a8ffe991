"""The example CI files (examples/ci/) and their lint, scripts/lint_ci_examples.py
(issue 38 item 4; docs/ci.md, "Example CI files"): the shipped files pass; a planted
copy with one fault fails with exactly one ``error:`` line naming the file, the line
and the rule."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GITHUB = ROOT / "examples" / "ci" / "github-actions.yml"
GITLAB = ROOT / "examples" / "ci" / "gitlab-ci.yml"


def load_lint():
    spec = importlib.util.spec_from_file_location("lint_ci_examples", ROOT / "scripts" / "lint_ci_examples.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


lint = load_lint()


def test_the_shipped_files_pass():
    r = subprocess.run([sys.executable, "scripts/lint_ci_examples.py"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert r.stdout.splitlines() == ["ok: examples/ci/github-actions.yml (GitHub Actions)",
                                     "ok: examples/ci/gitlab-ci.yml (GitLab CI)"]


def test_the_shipped_files_run_what_the_issue_asks():
    """Bootstrap, the 3-shard check with JUnit and annotations, the README's tests, the
    markdown review page, and both compile caches, in each file."""
    for path, kind in ((GITHUB, "github"), (GITLAB, "gitlab")):
        text = path.read_text()
        assert "bash scripts/bootstrap.sh" in text
        assert "python -m pytest -q" in text
        assert f"--annotations {kind}" in text
        assert "--junit" in text
        assert "parity diff --base" in text and "--format markdown" in text
        assert "CCACHE_DIR" in text and "PARITY_COMPILE_CACHE" in text
    assert "shard: [1, 2, 3]" in GITHUB.read_text()
    assert "parallel: 3" in GITLAB.read_text() and "--shard $CI_NODE_INDEX/$CI_NODE_TOTAL" in GITLAB.read_text()


def plant(tmp_path, source: Path, old: str, new: str) -> tuple[Path, int]:
    """A copy of ``source`` in tmp_path with the first ``old`` replaced by ``new``; and the
    1-based line of the replacement."""
    text = source.read_text()
    assert old in text
    at = text.index(old)
    out = tmp_path / source.name
    out.write_text(text[:at] + new + text[at + len(old):])
    return out, text[:at].count("\n") + 1


def run_lint(capsys, path: Path) -> tuple[int, list[str]]:
    status = lint.main([str(path)])
    err = capsys.readouterr().err
    return status, [line for line in err.splitlines() if line]


@pytest.mark.parametrize("source, old, new, rule, what", [
    (GITHUB, "--annotations github", "--annotatons github", "parity-command",
     "unrecognized arguments: --annotatons"),
    (GITLAB, "python -m pytest -q", "python -m pytest -q && bash scripts/no_such_step.sh", "missing-file",
     "scripts/no_such_step.sh"),
    (GITLAB, "stage: test\n", "stage: unit\n", "gitlab-stage", "job tests's stage unit is not declared"),
    (GITHUB, "    runs-on: ubuntu-24.04\n    steps:\n      - uses: actions/checkout@v4\n      - name: ccache\n"
             "        uses: actions/cache@v4\n        with:\n          path: .cache/ccache\n"
             "          key: ccache-${{ runner.os }}-${{ github.sha }}\n"
             "          restore-keys: ccache-${{ runner.os }}-\n      - name: LLVM",
     "    steps:\n      - uses: actions/checkout@v4\n      - name: ccache\n"
     "        uses: actions/cache@v4\n        with:\n          path: .cache/ccache\n"
     "          key: ccache-${{ runner.os }}-${{ github.sha }}\n"
     "          restore-keys: ccache-${{ runner.os }}-\n      - name: LLVM", "github-runs-on",
     "job tests has no `runs-on`"),
    (GITHUB, "parity check --shard", "parity chek --shard", "parity-command", "invalid choice: 'chek'"),
    (GITLAB, "--format markdown", "--format md", "parity-command", "invalid choice: 'md'"),
])
def test_a_planted_fault_is_one_error_line(tmp_path, capsys, source, old, new, rule, what):
    bad, line = plant(tmp_path, source, old, new)
    status, errors = run_lint(capsys, bad)
    assert status == 1
    assert len(errors) == 1, errors
    prefix, _, rest = errors[0].partition(f": {rule}: ")
    assert rest, errors[0]
    assert what in rest
    if rule == "github-runs-on":  # reported at the job's key, the line before the old runs-on
        line = GITHUB.read_text().splitlines().index("  tests:") + 1
    assert prefix == f"error: {bad}:{line}"


def test_a_step_with_both_run_and_uses_and_a_job_without_steps(tmp_path, capsys):
    bad, line = plant(tmp_path, GITHUB, "      - name: system packages for the caches\n        run:",
                      "      - name: system packages for the caches\n        uses: actions/x@v1\n        run:")
    status, errors = run_lint(capsys, bad)
    assert status == 1 and len(errors) == 1
    assert errors[0] == f"error: {bad}:{line}: github-step: a step of job check has run and uses: want one"


def test_a_gitlab_script_that_is_a_string_and_no_on_trigger(tmp_path, capsys):
    bad, line = plant(tmp_path, GITLAB, "  script:\n    - python -m pytest -q\n    - python scripts/lint_ci_examples.py\n",
                      "  script: python -m pytest -q\n")
    status, errors = run_lint(capsys, bad)
    assert (status, errors) == (1, [f"error: {bad}:{line}: gitlab-script: job tests's `script:` is not a list of commands"])
    bad, _ = plant(tmp_path, GITHUB, "on:\n", "triggers:\n")
    status, errors = run_lint(capsys, bad)
    first = GITHUB.read_text().splitlines().index("name: parity") + 1  # the mapping's first key, after the comments
    assert (status, errors) == (1, [f"error: {bad}:{first}: github-on: the workflow has no `on:` trigger"])


def test_bad_yaml_is_one_line_exit_2(tmp_path, capsys):
    bad = tmp_path / "gitlab-ci.yml"
    bad.write_text("stages: [check\ntests:\n  script: []\n")
    status, errors = run_lint(capsys, bad)
    assert status == 2 and len(errors) == 1
    assert errors[0].startswith(f"error: {bad}:") and ": yaml: " in errors[0]


@pytest.mark.parametrize("line, commands", [
    ("rc=0; parity diff --base origin/main --format markdown > ir-review.md || rc=$?",
     [["parity", "diff", "--base", "origin/main", "--format", "markdown"]]),
    ("if [ \"$rc\" -gt 1 ]; then exit \"$rc\"; fi", [["[", "$rc", "-gt", "1", "]"], ["exit", "$rc"]]),
    ("CI=1 parity check -j 2 2>&1 | tee log  # comment", [["parity", "check", "-j", "2"], ["tee", "log"]]),
])
def test_shell_lines_split_into_simple_commands(line, commands):
    assert lint.simple_commands(line) == commands


def test_github_matrix_and_gitlab_parallel_give_every_variant():
    import yaml
    job = yaml.compose("strategy:\n  matrix:\n    shard: [2, 3]\n    os: [a, b]\n", Loader=lint.LOADER)
    variants = lint._github_subst(job)
    assert variants("--shard ${{ matrix.shard }}/3 ${{ github.sha }}") == ["--shard 2/3 EXPR", "--shard 3/3 EXPR"]
    assert variants("${{ matrix.os }}-${{ matrix.shard }}") == ["a-2", "a-3", "b-2", "b-3"]
    assert variants("plain") == ["plain"]
    par = yaml.compose("3", Loader=lint.LOADER)
    assert lint._gitlab_subst(par)("--shard $CI_NODE_INDEX/${CI_NODE_TOTAL}") == \
        ["--shard 1/3", "--shard 2/3", "--shard 3/3"]
    assert lint._gitlab_subst(None)("x $CI_NODE_TOTAL") == ["x 1"]


@pytest.mark.parametrize("source, old, new, what", [
    (GITHUB, "shard: [1, 2, 3]", "shard: [1, 2]", "never runs shard(s) 3 of 3"),
    (GITLAB, "--shard $CI_NODE_INDEX/$CI_NODE_TOTAL", "--shard $CI_NODE_INDEX/4", "never runs shard(s) 4 of 4"),
])
def test_a_matrix_that_misses_a_shard(tmp_path, capsys, source, old, new, what):
    bad, _ = plant(tmp_path, source, old, new)
    status, errors = run_lint(capsys, bad)
    line = next(i for i, text in enumerate(bad.read_text().splitlines(), 1) if "parity check --shard" in text)
    assert status == 1 and len(errors) == 1, errors
    assert errors[0].startswith(f"error: {bad}:{line}: shard-coverage: ") and what in errors[0]


def test_a_shard_beyond_its_count_is_the_checks_own_error(tmp_path, capsys):
    bad, line = plant(tmp_path, GITLAB, "--shard $CI_NODE_INDEX/$CI_NODE_TOTAL", "--shard $CI_NODE_INDEX/2")
    status, errors = run_lint(capsys, bad)
    assert status == 1 and len(errors) == 1, errors  # reported once, for the first variant with it (3/2)
    assert errors[0].startswith(f"error: {bad}:{line}: parity-command: ")
    assert errors[0].endswith("parity check: argument --shard: I/N needs 1 <= I <= N, got '3/2' "
                              "(see `parity check --help`)")
