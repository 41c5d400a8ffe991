"""parity.base.escape.shown: every outside name printed on one safe line."""
from parity.base.escape import shown


class Forged(str):
    def __str__(self):
        return "forged\nline"

    def __format__(self, spec):
        return "forged\nline"


def test_identity_on_project_names():
    for name in ("llvm23/conv_implicit_gemm/bf16_64x64", "a-b.c@d:e=f, g"):
        assert shown(name) == name


def test_line_breaks_and_separators_escaped():
    assert shown("a\nRESULT: GREEN") == "a\\nRESULT: GREEN"
    assert shown("a\u2028b\u2029c\x85d\re") == "a\\u2028b\\u2029c\\x85d\\re"
    assert "\n" not in shown("x\n" * 10)


def test_surrogate_encodes():
    s = shown("key\udc80")
    assert s == "key\\udc80"
    s.encode("utf-8")


def test_backslash_escaped_so_escapes_cannot_be_forged():
    assert shown("a\\nb") == "a\\\\nb"


def test_str_subclass_read_as_plain_str():
    assert shown(Forged("fam")) == "fam"


def test_ansi_escape_and_bidi_override():
    assert shown("\x1b[31mred") == "\\x1b[31mred"
    assert shown("a\u202eb") == "a\\u202eb"


def test_cut_marks_length():
    s = shown("x" * 500, limit=10)
    assert s == "x" * 10 + "...(+490 chars)"


def test_broken_str_never_raises():
    class Bad:
        def __str__(self):
            raise RuntimeError("no")
    assert shown(Bad()) == "<unprintable Bad: RuntimeError>"
