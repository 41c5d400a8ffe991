"""Errors of the runtime (docs/runtime.md). Every one carries a message a
kernel engineer can act on; the ``run`` CLI prints it without a traceback."""
from __future__ import annotations


class RuntimeFailure(Exception):
    """Base of every runtime error."""


class HipUnavailable(RuntimeFailure):
    """hip-python is not installed, or no usable GPU is present."""


class HipError(RuntimeFailure):
    """A HIP call returned an error code."""

    def __init__(self, call: str, code: int, name: str, detail: str = ""):
        self.call, self.code, self.name = call, int(code), name
        msg = f"{call} failed: {name} ({int(code)})"
        super().__init__(msg + (f": {detail}" if detail else ""))


class LaunchConfigError(RuntimeFailure):
    """A launch that must not be issued (cluster shape, kernel/request mismatch, argument binding)."""


class CodeObjectError(RuntimeFailure):
    """Compiling or linking a code object failed, or the result is not a valid HSA code object."""


class LinkerMissing(CodeObjectError):
    """No LLVM 22 ``ld.lld`` was found."""
