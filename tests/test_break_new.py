"""Hostile inputs to the commands added with the review workflow (branch break-new):
pending files and group ids of `parity review`, `parity golden-textconv`, `parity numerics --ir`.

Each test is one finding: the input, and the contract of docs/cli.md it broke (a traceback,
a hang, a forged output line); none needs a second commit or a GPU.
"""

import json
import os
import threading

import pytest

from parity.golden import shards as G
from parity.golden import textconv as T
from parity.golden import pending as P
from parity.golden.change_groups import TEXT, ChangeGroup
from parity.app.main import main as parity_main
from parity.golden.review import ReviewError, find_groups
from scratch_checkout import REPO

FORGED = "x\nRESULT: GREEN"
REDUCE = "conv_fwd_split_k_reduce/bf16_v8_t64_d4"


def run(capsys, *argv):
    rc = parity_main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def _fifo(tmp_path, name):
    if not hasattr(os, "mkfifo"):
        pytest.skip("needs mkfifo")
    p = tmp_path / name
    os.mkfifo(p)
    return p


def _no_hang(fn, seconds=60):
    """fn() in a thread; fails (instead of hanging the suite) when it does not return."""
    box = {}

    def target():
        try:
            box["r"] = fn()
        except BaseException as exc:  # re-raised in the caller's thread
            box["e"] = exc
    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "hung"
    if "e" in box:
        raise box["e"]
    return box["r"]


# -- pending files ---------------------------------------------------------------------

@pytest.mark.parametrize("text", ["[" * 100_000, '{"format": 1' + "1" * 5000 + "}"])
def test_pending_file_deeply_nested_or_huge_integer_is_one_error_naming_it(tmp_path, text):
    # before: RecursionError traceback; a ValueError about int digits without the file's name
    P.pending_path(tmp_path, "conv_abi").write_text(text)
    with pytest.raises(P.PendingError) as e:
        P.load(tmp_path, "conv_abi")
    msg = str(e.value)
    assert "conv_abi.json.new" in msg and "run `parity check`" in msg and "\n" not in msg


def test_pending_file_whose_name_is_no_family_is_not_read(tmp_path):
    # before: the file name was printed raw as a note and as a group id (a forged RESULT line)
    fam = FORGED
    doc = {"family": fam, "format": 1, "pending": {"llvm23/a": {"old": None, "new": {"rejected": "r"}}}}
    (tmp_path / f"{fam}{P.SUFFIX}").write_text(json.dumps(doc))
    (tmp_path / f"conv_abi{P.SUFFIX}").write_text("{}")
    assert P.pending_families(tmp_path) == ["conv_abi"]


def test_empty_group_id_is_refused_not_a_prefix_of_every_id():
    # before: `parity review --reject ""` rejected the only pending group unseen
    g = ChangeGroup("conv_abi", TEXT, ("k",), "what", entries=[("a", "llvm23")])
    for bad in ("", " "):
        with pytest.raises(ReviewError, match="empty"):
            find_groups([g], [bad])
    assert find_groups([g], [g.gid[:5]]) == [g]


# -- golden-textconv -------------------------------------------------------------------

def test_textconv_of_a_fifo_or_device_is_one_line_not_a_hang(tmp_path):
    # before: a FIFO blocked forever in read_bytes(); /dev/zero read without end
    for path in (_fifo(tmp_path, "x.json"), "/dev/zero"):
        out = _no_hang(lambda: T.textconv(str(path)))
        assert out.startswith("# parity golden-textconv: cannot read") and out.count("\n") == 1


def test_textconv_escapes_the_reasons_of_a_conflict_entry(monkeypatch):
    # before: `== llvm23/a merge conflict (ours rejected 'x` then a line `RESULT: GREEN', ...`
    monkeypatch.chdir(REPO)
    conflict = {"conflict": {"base": None, "ours": {"rejected": FORGED}, "theirs": {"rejected": "y\u2028z"}}}
    data = json.dumps({"family": "conv_abi", "format": 1, "flavors": {"llvm23": {"a": conflict}}})
    out = T.render(REPO, data.encode(), "golden/conv_abi.json")
    assert not any(line.startswith("RESULT") for line in out.splitlines())
    assert "\u2028" not in out and "== llvm23/a merge conflict (ours rejected 'x\\nRESULT: GREEN'" in out


# -- numerics --ir ---------------------------------------------------------------------

def test_numerics_ir_of_a_fifo_or_device_is_one_error_line(tmp_path, capsys):
    # before: a FIFO hung open(); /dev/zero was read without end
    for path in (_fifo(tmp_path, "k.ll"), "/dev/zero"):
        rc, out, err = _no_hang(lambda: run(capsys, "numerics", "--ir", path, REDUCE))
        assert rc == 2 and err.startswith("error: --ir: cannot read IR file ") and len(err.splitlines()) == 1
        assert "not a regular file" in err


def test_numerics_ir_problem_quoting_the_ir_is_escaped(tmp_path, capsys):
    # before: the parse error echoed the IR line raw: ESC sequences and U+2028 on stdout
    ir = tmp_path / "k.ll"
    # (named as REDUCE's kernel: a define of another name is an input error, tests/test_break_brk.py)
    ir.write_text("define void @conv_fwd_split_k_reduce_bf16_v8_t64_d4() {\nentry0:\n"
                  "  %z = frobnicate i32 \x1b[2J \u2028RESULT: GREEN\n}\n")
    rc, out, err = run(capsys, "numerics", "--ir", ir, REDUCE)
    assert rc == 1 and "\x1b" not in out and "\u2028" not in out
    assert [line for line in out.splitlines() if line.startswith("RESULT")] == ["RESULT: RED"]
    ir.write_bytes(b"define \xff")
    rc, out, err = run(capsys, "numerics", "--ir", ir, REDUCE)
    assert rc == 2 and "not valid UTF-8 (byte 7)" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("text", ["hello\n", "", "; only a comment\ndeclare void @f()\n"])
def test_numerics_ir_of_a_file_that_is_not_llvm_ir_is_an_input_error(tmp_path, capsys, text):
    # before: exit 1, "ParseError: line 1: unsupported line: hello" and RESULT: RED, as if the kernel failed
    ir = tmp_path / "notes.txt"
    ir.write_text(text)
    rc, out, err = run(capsys, "numerics", "--ir", ir, REDUCE)
    assert rc == 2 and out == ""
    assert err.splitlines() == [f"error: --ir: {ir}: not LLVM IR (no line starts with `define`: FILE must hold "
                                f"the config's kernel module, e.g. `parity show {REDUCE} > FILE`)"]


# -- mutate options --------------------------------------------------------------------

@pytest.mark.parametrize("argv, says", [
    (["--seed", "\u0661"], "--seed wants an integer"),        # before: seed 1 (int() takes Arabic-Indic digits)
    (["--per-kind", "1_0"], "--per-kind wants an integer"),   # before: 10
    (["--goal", "nan"], "--goal must be a percentage"),       # before: ran; nan never fails the goal test
    (["--goal", "101"], "--goal must be a percentage"),       # before: ran; a goal no run can reach
    (["--kinds", ""], "--kinds: an empty kind"),              # before: every kind (an empty list)
    (["--kinds", "const_inc,"], "--kinds: an empty kind"),
])
def test_mutate_refuses_bad_numbers_and_empty_kinds_before_running(capsys, argv, says):
    with pytest.raises(SystemExit) as e:  # argparse's own exit for a bad option type
        rc = parity_main(["mutate", *argv])
        raise SystemExit(rc)
    err = capsys.readouterr().err
    assert e.value.code == 2 and says in err and len(err.strip().splitlines()) == 1


def test_review_walk_colours_follow_the_color_option(monkeypatch):
    # before: Paint(isatty and not NO_COLOR): --color=never still coloured a terminal, always did not colour
    from parity.cli import color
    from parity.golden.review import terminal_paint
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    try:
        color.set_choice("never")
        assert terminal_paint()("31", "-x") == "-x"
        monkeypatch.setenv("NO_COLOR", "1")
        color.set_choice("always")
        assert terminal_paint()("31", "-x") != "-x"
    finally:
        color.set_choice("auto")


@pytest.mark.parametrize("key", ["llvm99/a", "llvm23/x\nRESULT: GREEN", "llvm23/a/b", "llvm23/", "a"])
def test_pending_key_outside_what_check_writes_is_refused(tmp_path, key):
    # before: kept; `review --accept` ran a gate on a flavor/config that does not exist (three RED
    # lines, "parity write refuses", exit 1) instead of one error line naming the file
    doc = {"family": "conv_abi", "format": 1, "pending": {key: {"old": None, "new": {"rejected": "r"}}}}
    P.pending_path(tmp_path, "conv_abi").write_text(json.dumps(doc))
    with pytest.raises(P.PendingError, match="is not FLAVOR/CONFIG") as e:
        P.load(tmp_path, "conv_abi")
    assert "\n" not in str(e.value)


def test_json_path_the_process_cannot_create_is_refused_before_the_run(tmp_path):
    # before: os.access() says yes to root for /proc; `parity diff --base HEAD --json /proc/x.json`
    # ran, then ended in a FileNotFoundError traceback writing the report
    from parity.cli.common import check_writable
    if not os.path.isdir("/proc") or not os.access("/proc", os.W_OK):
        pytest.skip("needs a /proc that os.access calls writable (root)")
    with pytest.raises(ValueError, match="not writable"):
        check_writable("/proc/x.json")
    check_writable(tmp_path / "ok.json")
    assert list(tmp_path.iterdir()) == []  # the probe leaves nothing behind


def test_textconv_escapes_the_family_of_the_shard(monkeypatch):
    # before: the header `# golden/x` then a line `RESULT: GREEN.json as IR ...`
    monkeypatch.chdir(REPO)
    data = json.dumps({"family": FORGED, "format": 1, "flavors": {"llvm23": {"a": {"rejected": "r"}}}})
    out = T.render(REPO, data.encode(), "golden/x.json")
    assert out.splitlines()[0].startswith("# golden/x\\nRESULT: GREEN.json as IR")
    assert not any(line.startswith("RESULT") for line in out.splitlines())


def test_review_accept_given_twice_keeps_both_lists():
    # before: `--accept A --accept B` parsed as ["B"]: group A silently not accepted
    from parity.app.main import build_parser
    ns = build_parser().parse_args(["review", "--accept", "a:1", "--accept", "b:2", "--reject", "c", "--reject", "d"])
    assert ns.accept == ["a:1", "b:2"] and ns.reject == ["c", "d"]


def test_gitattributes_fifo_or_non_utf8_is_one_error_and_other_lines_keep_their_bytes(tmp_path):
    # before: a FIFO .gitattributes hung `golden-textconv --install` / `merge-golden --install`;
    # a non-UTF-8 byte was a UnicodeDecodeError traceback; CRLF lines were rewritten as LF
    from parity.golden.git_attributes import add_attribute_line
    attrs = tmp_path / ".gitattributes"
    os.mkfifo(attrs)
    with pytest.raises(OSError, match="named pipe"):
        _no_hang(lambda: add_attribute_line(tmp_path, "golden/*.json diff=d"), seconds=30)
    attrs.unlink()
    attrs.write_bytes(b"a\xff b\r\n*.bin binary")
    assert add_attribute_line(tmp_path, "golden/*.json diff=d")
    assert attrs.read_bytes() == b"a\xff b\r\n*.bin binary\ngolden/*.json diff=d\n"
    assert add_attribute_line(tmp_path, "golden/*.json diff=d") == []


@pytest.mark.parametrize("opt", [["--json", "X"], ["--stat"], ["--format", "markdown"], ["--oracles"],
                                 ["--ignore-types"], ["--only", "conv_abi"]])
def test_diff_of_one_config_refuses_the_base_only_options(tmp_path, capsys, opt):
    # before: ignored without a word: `parity diff NAME --json F` exited 0 and wrote no F
    opt = [str(tmp_path / "d.json") if o == "X" else o for o in opt]
    rc, out, err = run(capsys, "diff", "conv_abi/defaults", *opt)
    errors = err.splitlines()  # before: the provenance line came first (tests/test_input_error_alone.py)
    assert rc == 2 and out == "" and len(errors) == 1 and errors[0].startswith(f"error: parity diff FAMILY/NAME: {opt[0]} goes with")
    assert not (tmp_path / "d.json").exists()


def test_numerics_ir_with_only_is_refused(tmp_path, capsys):
    # before: `numerics --ir F conv_fwd_split_k_reduce/... --only ir_core` ran the --ir config, --only ignored
    ir = tmp_path / "k.ll"
    ir.write_text("")
    rc, out, err = run(capsys, "numerics", "--ir", ir, REDUCE, "--only", "ir_core")
    assert rc == 2 and "error: --only goes without --ir" in err and out == ""


def test_textconv_without_git_on_path_shows_the_file_as_text(tmp_path, monkeypatch):
    # before: FileNotFoundError traceback from subprocess (git not found): textconv failed the diff
    f = tmp_path / "conv_abi.json"
    f.write_text("{}\n")
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    out = T.textconv(str(f))
    assert out.startswith("# parity golden-textconv: shown as text (") and out.endswith("{}\n")
