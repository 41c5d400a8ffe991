"""Shared fixtures: ``engine`` runs a test against both engines."""
from __future__ import annotations

import importlib

import pytest

ENGINE_MODULES = {"python": "python_engine", "cpp": "cpp_engine"}


def pytest_sessionstart(session):
    """Rebuild/check cpp_engine once (parity/base/stale.py): a stale library fails the
    session in one line; worker processes then skip the import-time rebuild."""
    from parity.base import stale
    msg = stale.check_cpp_build()
    if msg:
        raise pytest.UsageError(msg)
    stale.mark_checked()


@pytest.fixture(params=sorted(ENGINE_MODULES), ids=lambda n: n)
def engine(request):
    """The engine module (``python_engine`` or ``cpp_engine``). A missing C++
    engine is an error, not a skip: CI builds it."""
    return importlib.import_module(ENGINE_MODULES[request.param])


@pytest.fixture(scope="session")
def both():
    """(python_engine, cpp_engine)."""
    return tuple(importlib.import_module(ENGINE_MODULES[n]) for n in ("python", "cpp"))
