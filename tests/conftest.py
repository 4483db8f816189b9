"""Shared pytest fixtures: the real exports folder, a fresh DuckDB connection with the schema, golden updates,
a Dask cluster shared by consecutive modules and the session's big export tree (tests/real_process_fixtures.py),
the browser tests' Chromium (tests/browser_fixture.py)."""

from __future__ import annotations

import compileall
import os
import sys
from pathlib import Path

import pytest

from analyzer.execution import threads
from tests.browser_fixture import browser  # noqa: F401 (the browser tests' shared fixture)
from tests.real_process_fixtures import SHARED_CLUSTER, big_tree, cluster, shared_cluster  # noqa: F401 (fixtures of several modules)

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "real"


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile the bytecode of what the tests' own program starts import (the program; the bench and the
    generator it runs), once, as pip does when it installs a package (an editable install does not). In a
    fresh clone with PYTHONDONTWRITEBYTECODE set (as in CI), every program start, batch worker and Dask
    worker would otherwise compile the modules it imports again. The test modules are pytest's to load.
    Once, in the main process, not in each pytest-xdist worker."""
    if not hasattr(session.config, "workerinput"):
        for package in ("analyzer", "fixtures", "bench"):
            compileall.compile_dir(ROOT / package, quiet=1)


def pytest_configure(config: pytest.Config) -> None:
    """The test modules' rewritten bytecode is kept (below). Under pytest-xdist, the workers share the cores as
    the workers of a batch do (``execution/threads.py``): N workers each starting a thread per core would take
    turns on the same cores. Set here, in the main process, for the workers to inherit: polars (the fixture
    generator's frames) sizes its thread pool when it is imported, which in a worker comes before the worker's
    own hooks (this file imports the program). Counts set by whoever runs the suite are kept; tests whose point
    is DuckDB's parallel aggregation set their own."""
    # Each process rewrites the test modules' asserts as it imports them; with PYTHONDONTWRITEBYTECODE set (as
    # in CI) pytest keeps none of it, and every run, in every worker, rewrites every test module again. Kept in
    # tests/__pycache__ (as pytest_sessionstart keeps the program's bytecode), a later run reads them instead.
    sys.dont_write_bytecode = False
    workers = config.getoption("numprocesses", None)
    if isinstance(workers, int) and workers > 0:
        os.environ[threads.ENV] = str(threads.worker_thread_count(workers))
        os.environ.setdefault("POLARS_MAX_THREADS", str(threads.core_share(workers)))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files instead of comparing")


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]):
    """A test reading the real exports (through the ``real_dir`` fixture) is marked real_data; a test that reads
    them or drives Chromium is slow as well (the fast loop, ``-m "not slow"``, runs neither); under
    pytest-xdist, the tests sharing a module-scoped fixture form one group (unless their module names one).

    A wrapper: the marks are set before pytest-xdist's own hook of this name, and the deselection by ``-m``, read
    them."""
    for item in items:
        if "real_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.real_data)
        if item.get_closest_marker("real_data") or item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.slow)
    if config.pluginmanager.hasplugin("xdist"):
        for item in items:
            if item.get_closest_marker("xdist_group") is None and _uses_a_module_fixture(item):
                item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    result = yield
    if getattr(config.option, "loadgroup", False):  # a pytest-xdist worker under --dist loadgroup
        for item in items:
            _name_the_group_in_the_node_id(item)
    return result


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """The shared Dask cluster stopped once the next test's module uses none (tests/real_process_fixtures.py)."""
    keeper = item.config.stash.get(SHARED_CLUSTER, None)
    if keeper is not None:
        keeper.stop_unless_needed(nextitem)


def _name_the_group_in_the_node_id(item: pytest.Item) -> None:
    """The scheduler of ``--dist loadgroup`` sends the tests whose node ids end in ``@<group>`` to one worker.
    pytest-xdist appends that by setting ``item._nodeid``, which pytest 9 no longer reads (a node keeps its
    id in ``item._id``): without this, every group was spread over both workers, each building the fixture."""
    from _pytest.nodeid import coerce_node_id

    names = sorted(
        {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
    )
    if names and not item.nodeid.endswith("@" + "_".join(names)):
        item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(names)}")


def _uses_a_module_fixture(item: pytest.Item) -> bool:
    """True when the test shares a module-scoped fixture (a Dask cluster, a generated tree, a browser):
    ``--dist loadgroup`` then runs its module's sharing tests on one worker, which builds it once, and
    spreads the other tests one by one."""
    info = getattr(item, "_fixtureinfo", None)
    return bool(info) and any(d.scope == "module" for defs in info.name2fixturedefs.values() for d in defs)


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(scope="session")
def real_dir() -> Path:
    """../shared/real, or skip: the real exports live beside the project, never inside it."""
    if not REAL.is_dir():
        pytest.skip("../shared/real is absent: the real Ascend exports are only beside the project checkout")
    return REAL


@pytest.fixture
def con():
    """An in-memory DuckDB connection holding every normalized table, empty."""
    from analyzer.ingest.database import connect

    c = connect()
    yield c
    c.close()
