"""The HIP binding, imported lazily: ``from hip import hip`` (the hip-python
package, ``pip install 'splitk-parity[runtime]'``).

Everything else in the runtime talks to HIP through :class:`Hip`, a thin
wrapper that turns hip-python's ``(hipError_t, result...)`` tuples into values
or :class:`~.errors.HipError`. Tests pass a fake module object with the same
function names (tests/fake_hip.py), so no GPU or ROCm is needed to test the
launch logic.
"""
from __future__ import annotations

from parity.launch.errors import HipError, HipUnavailable

INSTALL_HINT = ("install hip-python (pip install 'splitk-parity[runtime]') on a machine with ROCm "
                "and a gfx1250 GPU")


def load_hip():
    """The ``hip`` module of hip-python, or HipUnavailable with what to install."""
    try:
        from hip import hip as mod  # noqa: PLC0415 - lazy on purpose
    except ImportError as exc:  # ModuleNotFoundError or a missing ROCm library under it
        raise HipUnavailable(f"the HIP runtime is not available: cannot import hip-python "
                             f"({type(exc).__name__}: {exc}); {INSTALL_HINT}") from None
    return mod


def _code(err) -> int:
    return int(getattr(err, "value", err))


class Hip:
    """hip-python with checked calls. ``mod`` is the ``hip`` module (or a fake)."""

    def __init__(self, mod=None):
        self.mod = mod if mod is not None else load_hip()

    def name_of(self, err) -> str:
        try:
            r = self.mod.hipGetErrorName(err)
            name = r[1] if isinstance(r, tuple) else r
            if isinstance(name, bytes):
                name = name.decode("utf-8", "replace")
            if name:
                return str(name)
        except Exception:  # noqa: BLE001 - naming an error must not raise another
            pass
        return getattr(err, "name", None) or f"hipError {_code(err)}"

    def call(self, fn: str, *args, detail: str = ""):
        """Call ``hip.<fn>(*args)``; return the result (None, one value or a tuple)
        or raise HipError naming the call and the error."""
        f = getattr(self.mod, fn, None)
        if f is None:
            raise HipUnavailable(f"the installed hip-python has no {fn}; {INSTALL_HINT}")
        r = f(*args)
        err, rest = (r[0], r[1:]) if isinstance(r, tuple) else (r, ())
        if _code(err) != 0:
            raise HipError(fn, _code(err), self.name_of(err), detail)
        if not rest:
            return None
        return rest[0] if len(rest) == 1 else rest
