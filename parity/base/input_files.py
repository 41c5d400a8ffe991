"""Reading the files users hand the tools: catalogs, AOT and runtime
manifests, the code objects a manifest names (issue 24; docs/cli.md "Input
files").

Every such file is checked before it is opened, and read with caps, so a bad
one is one ``error:`` line (:class:`InputFileError`) and never a hang, a
traceback or a read without end:

* the file type, before open (``os.stat``): a directory, named pipe (FIFO),
  socket or device (``/dev/zero``, a terminal) is refused by name; checked
  again on the descriptor (opened ``O_NONBLOCK | O_NOCTTY``, so a FIFO swapped
  in between never blocks);
* the size, before any byte is read: at most ``max_bytes`` (the file's own
  cap; :data:`MAX_CATALOG_BYTES` for a catalog), and at most ``max_bytes + 1``
  bytes are ever read (a file that grows while read is refused too);
* for text (:func:`read_text`): strict UTF-8 (the first bad byte is named by
  its offset, line and column), no control character but tab, LF and CR, no
  U+2028/U+2029 (they would split a line for ``str.splitlines`` and forge
  output lines), and no line longer than ``max_line_bytes``
  (:data:`MAX_CATALOG_LINE_BYTES` for a catalog).

File names and bytes from the file reach messages only through
:func:`parity.base.escape.shown`.
"""
from __future__ import annotations

import os
import re
import stat

from parity.base.escape import shown

__all__ = ["InputFileError", "MAX_CATALOG_BYTES", "MAX_LAYERS_CATALOG_BYTES", "MAX_CATALOG_LINE_BYTES", "MAX_MANIFEST_BYTES",
           "MAX_CODE_OBJECT_BYTES", "MAX_CONFIG_BYTES", "MAX_IR_BYTES", "check_regular", "read_bytes", "read_text", "check_text",
           "bad_text_char"]

#: The largest catalog file (bytes): 400 times the shipped parity/data/layers.txt
#: (10 kB, 51 layers), about 20,000 layers of MIOpenDriver lines.
MAX_CATALOG_BYTES = 4 << 20
#: The largest catalog ``parity layers`` reads (bytes): it streams its layers and keeps one
#: record per distinct command and kernel (issue 39), so 100,000 layers of 200-byte lines
#: fit; ``emit --catalog`` and ``perf --layers`` keep every layer's plan and stay at
#: :data:`MAX_CATALOG_BYTES`.
MAX_LAYERS_CATALOG_BYTES = 32 << 20
#: The longest catalog line (bytes, without its line end); the shipped catalog's is 192.
MAX_CATALOG_LINE_BYTES = 4096
#: The largest AOT / runtime manifest (bytes); a full grid's manifest is well under 1 MiB.
MAX_MANIFEST_BYTES = 64 << 20
#: The largest code object a manifest may name (bytes).
MAX_CODE_OBJECT_BYTES = 256 << 20
#: The largest configs module (``parity/configs/<family>.py``, bytes); the largest shipped is under 64 kB.
MAX_CONFIG_BYTES = 4 << 20
#: The largest IR text ``parity numerics --ir`` reads (bytes); the largest shipped kernel is under 64 kB.
MAX_IR_BYTES = 16 << 20


class InputFileError(ValueError):
    """A file the tools will not read; the message is one line naming the
    file (escaped) and the rule."""


def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "not a regular file"


def _size_text(n: int) -> str:
    return f"{n} bytes" if n < 1 << 20 else f"{n} bytes ({n / (1 << 20):.1f} MiB)"


def check_regular(path, what: str, max_bytes: int) -> None:
    """InputFileError unless ``path`` is an existing regular file of at most
    ``max_bytes`` bytes (``os.stat``, nothing opened): for a file another
    reader opens (Python's import of a configs module)."""
    name = shown(os.fspath(path))
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputFileError(f"{what} {name}: no such file") from None
    except OSError as exc:
        raise InputFileError(f"{what} {name}: cannot stat: {shown(exc.strerror or exc)}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputFileError(f"{what} {name}: is {_kind(st.st_mode)}, not a regular file")
    if st.st_size > max_bytes:
        raise InputFileError(f"{what} {name}: is {_size_text(st.st_size)}; a {what} is at most "
                             f"{_size_text(max_bytes)}")


def read_bytes(path, what: str, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path`` (``what`` names it in messages:
    "catalog", "AOT manifest"). Raises InputFileError when it does not exist,
    is not a regular file (checked before open and on the open descriptor),
    is larger than ``max_bytes``, or cannot be read."""
    check_regular(path, what, max_bytes)
    name = shown(os.fspath(path))
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise InputFileError(f"{what} {name}: cannot open: {shown(exc.strerror or exc)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputFileError(f"{what} {name}: is {_kind(st.st_mode)}, not a regular file")
        chunks, got = [], 0
        while got <= max_bytes:
            b = os.read(fd, min(1 << 20, max_bytes + 1 - got))
            if not b:
                break
            chunks.append(b)
            got += len(b)
    except OSError as exc:
        raise InputFileError(f"{what} {name}: cannot read: {shown(exc.strerror or exc)}") from None
    finally:
        os.close(fd)
    if got > max_bytes:
        raise InputFileError(f"{what} {name}: grew past {_size_text(max_bytes)} while read; a {what} is at most "
                             f"{_size_text(max_bytes)}")
    return b"".join(chunks)


def bad_text_char(ch: str) -> str | None:
    """What is wrong with one character of input text, or None: a control
    character (other than tab and LF), U+2028/U+2029, or a lone surrogate
    (U+DC80-U+DCFF stands for a byte that was not UTF-8, as ``os`` decodes argv)."""
    o = ord(ch)
    if 0xDC80 <= o <= 0xDCFF:
        return f"byte 0x{o - 0xDC00:02x} is not UTF-8"
    if 0xD800 <= o <= 0xDFFF:
        return f"U+{o:04X} is a lone surrogate"
    if (o < 0x20 and ch not in "\t\n") or 0x7F <= o <= 0x9F:
        return f"U+{o:04X} is a control character"
    if o in (0x2028, 0x2029):
        return f"U+{o:04X} is a line or paragraph separator"
    return None


def check_text(text: str, where: str) -> None:
    """Check already-decoded input text (a command line given in argv):
    InputFileError naming ``where`` and the column of the first character
    :func:`bad_text_char` refuses."""
    m = _REFUSED_IN_TEXT.search(text)
    if m:
        raise InputFileError(f"{where}: column {m.start() + 1}: {bad_text_char(m.group())}")


def read_text(path, what: str, max_bytes: int, max_line_bytes: int) -> str:
    """The text of the regular file ``path`` (:func:`read_bytes`), strict
    UTF-8 with no refused character (:func:`bad_text_char`) and no line over
    ``max_line_bytes`` bytes, no leading byte order mark. Line ends are LF or CRLF. Raises InputFileError
    naming the file, line and column (and the byte offset for bad UTF-8)."""
    data = read_bytes(path, what, max_bytes)
    name = shown(os.fspath(path))
    if data.startswith(b"\xef\xbb\xbf"):  # as JSON inputs (parity/base/json_guard.py); before, the
        # BOM became part of the first layer's name: "layer name '\ufeffx' is not allowed"
        raise InputFileError(f"{what} {name}: starts with a UTF-8 byte order mark (U+FEFF); save it without one")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        off = exc.start
        line = data.count(b"\n", 0, off) + 1
        col = off - (data.rfind(b"\n", 0, off) + 1) + 1
        raise InputFileError(f"{what} {name}: byte offset {off} (line {line}, byte {col} of the line): "
                             f"byte 0x{data[off]:02x} is not UTF-8 text") from None
    for n, raw in enumerate(data.split(b"\n"), 1):
        size = len(raw) - raw.endswith(b"\r")
        if size > max_line_bytes:
            raise InputFileError(f"{what} {name}: line {n} is {size} bytes; a {what} line is at most "
                                 f"{max_line_bytes} bytes")
    m = _REFUSED_IN_FILE.search(text)
    if m:
        at = m.start()
        line = text.count("\n", 0, at) + 1
        col = at - (text.rfind("\n", 0, at) + 1) + 1
        raise InputFileError(f"{what} {name}: line {line}, column {col}: {bad_text_char(text[at])}")
    return text


# bad_text_char's characters as patterns: in a command line (tab and LF allowed),
# in a file (tab, LF, and CR only before LF)
_REFUSED_IN_TEXT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_REFUSED_IN_FILE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]|\r(?!\n)")
