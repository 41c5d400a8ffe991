"""Shared fixtures: ``engine`` runs a test against both engines."""
from __future__ import annotations

import importlib

import pytest

ENGINE_MODULES = {"python": "python_engine", "cpp": "cpp_engine"}


def pytest_configure(config):
    """Files longest first by measured seconds, ``PARITY_TEST_SHARD=I/N`` shards
    (tests/durations_plugin.py, docs/ci.md "Sharding")."""
    import durations_plugin
    if not config.pluginmanager.is_registered(durations_plugin):
        config.pluginmanager.register(durations_plugin, "parity_durations")


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


# -- skip reasons for CI (issue 39): .ci/run fails when a test skips for a reason not in
# .ci/skips_allowed.txt (scripts/check_skips.py), so a dependency that goes missing cannot
# turn tests into silent skips.
_SKIPS: list[str] = []


def pytest_runtest_logreport(report):
    """Collect every skip as ``nodeid<TAB>reason`` (the controller sees every worker's reports)."""
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = " ".join(str(reason).split()).removeprefix("Skipped: ")
        _SKIPS.append(f"{report.nodeid}\t{reason}")


def pytest_sessionfinish(session):
    """Write the skips to ``$PARITY_SKIP_LOG`` (controller only; unset: nothing written)."""
    import os
    path = os.environ.get("PARITY_SKIP_LOG")
    if path and not hasattr(session.config, "workerinput"):
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(line + "\n" for line in sorted(_SKIPS))
