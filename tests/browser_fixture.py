"""The headless Chromium the browser tests share: one per test module, or a skip (a failure under CI, which
must provide it)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.headless_chromium import INSTALL_HINT, chromium, missing_browser


def require_browser() -> None:
    """Skip the test when Chromium cannot run here; fail it under CI, which must provide it."""
    reason = missing_browser()
    if reason and os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must provide it ({INSTALL_HINT})")
    if reason:
        pytest.skip(f"{reason} ({INSTALL_HINT})")


@pytest.fixture(scope="module")
def browser() -> Iterator:
    """A driver of headless Chromium for the module's tests, or a skip (``require_browser``)."""
    require_browser()
    with chromium() as driver:
        yield driver
