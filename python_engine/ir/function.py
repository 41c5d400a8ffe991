"""Functions, parameters, basic blocks, instructions, and the module.
Twin: cpp_engine/src/ir/function.{h,cpp}.

Names: every register and block label inside a function is ``hint`` followed
by the function's one counter (``%acc12``, ``loop3``), given when the builder
creates it, so the builder call order alone decides the bytes (DESIGN §2).
Parameters keep their names as given.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import origin as _origin
from . import types as T
from .values import Value


@dataclass
class Param:
    """A kernel parameter: name, type and attribute keys in print order.

    Attribute keys are printed literally except ``"capture"``, which prints the
    flavor's pointer-capture attribute (``nocapture`` or ``captures(none)``).
    """

    name: str
    type: T.Type
    attrs: tuple = ()

    @property
    def value(self) -> Value:
        return Value(self.type, "%" + self.name)


class Instr:
    """One instruction; ``text()`` is its printed line without indentation.
    ``origin``: ``(file, line)`` of the builder call that made it, set only
    while origin recording is on (ir/origin.py); None otherwise."""

    __slots__ = ("line", "origin")

    def __init__(self, line: str):
        self.line = line
        self.origin = None

    def text(self) -> str:
        return self.line


class Phi(Instr):
    """``phi``; incoming edges may be added after creation (loops)."""

    __slots__ = ("result", "incoming")

    def __init__(self, result: Value):
        super().__init__("")
        self.result = result
        self.incoming: list = []

    def add_incoming(self, value: Value, block: "Block") -> None:
        self.incoming.append((value, block))

    def text(self) -> str:
        if not self.incoming:
            raise ValueError(f"phi {self.result.ref} has no incoming edge")
        edges = ", ".join(f"[ {v.ref}, %{b.name} ]" for v, b in self.incoming)
        return f"{self.result.ref} = phi {self.result.type.text} {edges}"


class Block:
    """A basic block: a label and its instructions. Ends with one terminator.
    ``origin`` as for :class:`Instr`."""

    __slots__ = ("name", "instrs", "terminated", "origin")

    def __init__(self, name: str):
        self.name = name
        self.instrs: list = []
        self.terminated = False
        self.origin = None


#: Hints that passed :func:`_check_hint` (a few dozen distinct ones per process;
#: the check runs once per hint, not once per name: 2.7 M character tests for the gate).
_GOOD_HINTS: set = set()


def _check_hint(hint: str) -> None:
    """ValueError unless ``hint`` is a non-empty ASCII identifier not ending in a digit;
    remembers a good one in ``_GOOD_HINTS``."""
    if not hint or not (hint[0].isalpha() or hint[0] == "_") or hint[-1].isdigit() \
            or not all(c.isalnum() or c == "_" for c in hint) or not hint.isascii():
        raise ValueError(f"SSA name hint {hint!r} must be an identifier not ending in a digit")
    _GOOD_HINTS.add(hint)


@dataclass
class Function:
    """A function definition (``define``).

    ``cc`` is the calling convention (``amdgpu_kernel``), ``attr_group`` the
    ordered ``(key, value)`` attribute pairs printed as ``attributes #0``.
    """

    name: str
    params: list
    ret: T.Type = T.VOID
    cc: str = "amdgpu_kernel"
    attr_group: tuple = ()
    blocks: list = field(default_factory=list)
    counter: int = 0
    #: {parameter name: its Value}, filled by :meth:`param` (kernels ask for the same few often)
    _param_values: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def fresh(self, hint: str) -> str:
        """Next name from the function's counter: ``hint`` + number.

        A hint must be a non-empty identifier that does not end in a digit, so
        that ``hint`` + number reads unambiguously; ValueError otherwise."""
        if hint not in _GOOD_HINTS:
            _check_hint(hint)
        n = self.counter
        self.counter += 1
        return f"{hint}{n}"

    def param(self, name: str) -> Value:
        """The value of parameter ``name``; KeyError if there is none."""
        v = self._param_values.get(name)
        if v is not None:
            return v
        for p in self.params:
            if p.name == name:
                v = self._param_values[name] = p.value
                return v
        raise KeyError(f"function {self.name} has no parameter {name}")

    def block(self, hint: str) -> Block:
        """Create (and append) a new basic block labelled ``hint`` + counter."""
        b = Block(self.fresh(hint))
        self.blocks.append(b)
        return b


@dataclass
class LdsGlobal:
    """An LDS (``addrspace(3)``) global: ``@name = internal addrspace(3) global
    [count x elem] poison, align N``."""

    name: str
    type: T.Type
    align: int
    #: ``(file, line)`` of the ``add_lds`` call while origin recording is on (ir/origin.py), else None
    origin: tuple | None = field(default=None, compare=False)

    @property
    def value(self) -> Value:
        return Value(T.LDS_PTR, "@" + self.name)


@dataclass
class Module:
    """One LLVM module for one kernel at one arch and flavor.

    ``flavor`` and ``arch`` are rows of the target tables; intrinsics used are
    recorded by table key and declared in table order by the printer.
    """

    flavor: object
    arch: object
    lds: list = field(default_factory=list)
    used_intrinsics: set = field(default_factory=set)
    function: Function | None = None
    metadata: list = field(default_factory=list)

    def add_lds(self, name: str, t: T.Type, align: int) -> Value:
        """Declare an LDS global; returns a pointer value to it."""
        g = LdsGlobal(name, t, align)
        if _origin.recording():  # the divergence locator names the kernel line that declared it
            g.origin = _origin.caller(__file__)
        self.lds.append(g)
        return g.value
