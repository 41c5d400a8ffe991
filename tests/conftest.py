"""Shared fixtures: ``engine`` runs a test against both engines."""
from __future__ import annotations

import importlib

import pytest

ENGINE_MODULES = {"python": "python_engine", "cpp": "cpp_engine"}


@pytest.fixture(params=sorted(ENGINE_MODULES), ids=lambda n: n)
def engine(request):
    """The engine module (``python_engine`` or ``cpp_engine``). A missing C++
    engine is an error, not a skip: CI builds it."""
    return importlib.import_module(ENGINE_MODULES[request.param])


@pytest.fixture(scope="session")
def both():
    """(python_engine, cpp_engine)."""
    return tuple(importlib.import_module(ENGINE_MODULES[n]) for n in ("python", "cpp"))
