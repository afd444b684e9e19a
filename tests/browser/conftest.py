"""Browser tests: Debian's Chromium driven by Playwright, against pytest-django's live server.

Playwright never downloads a browser here: it launches ``/usr/bin/chromium`` (or
``$CHROMIUM_PATH``). Without Chromium the tests are skipped locally with a hint, and fail in CI
(``CI`` set), where a skipped browser test would hide a missing install step.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

#: The documentation's screenshots. A test run refreshes them only when asked to
#: (``AGENT_MEMORY_SCREENSHOTS=1``); otherwise the shots go to a temporary directory, so a normal
#: ``pytest`` never changes the working tree.
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
REFRESH_SCREENSHOTS = os.environ.get("AGENT_MEMORY_SCREENSHOTS") == "1"

# Playwright's sync API runs an event loop in the test's thread; Django would otherwise refuse
# the tests' own ORM calls, which are synchronous and safe here.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def is_browser_test(item: pytest.Item) -> bool:
    return "tests/browser/" in str(item.fspath).replace(os.sep, "/")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the browser tests, and run them after every other test of the session (in their
    own order): the one Playwright of the session keeps its event loop marked as running in the
    main thread between its calls, so a test that runs ``asyncio.run`` (the MCP client, the
    agent frameworks) must not come after the first browser test."""
    browser = [item for item in items if is_browser_test(item)]
    for item in browser:
        item.add_marker(pytest.mark.browser)
    if browser:
        items[:] = [item for item in items if not is_browser_test(item)] + browser


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """One Chromium for the whole session (each test gets contexts of its own: ``page``,
    ``new_context``, ``page_in``)."""
    if not os.path.exists(CHROMIUM):
        message = f"Chromium not found at {CHROMIUM}: apt-get install -y chromium"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def new_context(browser):
    """Open browser contexts (``new_context(java_script_enabled=False, locale="ru-RU")``);
    all are closed after the test."""
    contexts = []

    def make(**options):
        options.setdefault("viewport", {"width": 1280, "height": 900})
        context = browser.new_context(**options)
        context.set_default_timeout(10_000)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def page_in(new_context):
    """``page_in("ru", {"width": 390, "height": 844})``: a new page that reads and asks for
    pages in that language, at that window size."""

    def make(language: str, viewport: dict[str, int]):
        return new_context(
            locale=f"{language}-{language.upper()}",
            extra_http_headers={"Accept-Language": language},
            viewport=viewport,
        ).new_page()

    return make


@pytest.fixture
def page(new_context):
    return new_context().new_page()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory) -> Path:
    """Where screenshot tests save their pictures: ``docs/screenshots/`` when
    ``AGENT_MEMORY_SCREENSHOTS=1``, else a temporary directory (the shots are still taken, so
    the checks around them run)."""
    if REFRESH_SCREENSHOTS:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return SCREENSHOTS
    return tmp_path_factory.mktemp("screenshots")


def save_screenshot(page, name: str, **options) -> None:
    """Refresh ``docs/screenshots/<name>`` only on request (``AGENT_MEMORY_SCREENSHOTS=1``), so
    a normal test run leaves the working tree unchanged."""
    if not REFRESH_SCREENSHOTS:
        return
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name), **options)
