"""Browser tests: Debian's Chromium driven by Playwright, against pytest-django's live server.

Playwright never downloads a browser here: it launches ``/usr/bin/chromium`` (or
``$CHROMIUM_PATH``). Without Chromium the tests are skipped locally with a hint, and fail in CI
(``CI`` set), where a skipped browser test would hide a missing install step.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
    # Pages of one site share a renderer process (see Contexts).
    "--process-per-site",
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
    """One Chromium for the whole session (each test gets contexts that are its alone while it
    runs: ``page``, ``new_context``, ``page_in``)."""
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


#: Idle browser contexts kept between tests (the least recently used one is closed beyond that).
KEPT_CONTEXTS = 12


class Contexts:
    """Browser contexts lent to one test at a time, one per set of options, and kept between
    tests: a new context starts a renderer process, loads the site's stylesheet and scripts
    again and compiles them, which costs more than most tests' own steps.

    A lent context holds one parked page on the live server's site (a small static file), so
    the test's pages join that page's renderer process (``--process-per-site``) and find the
    site's files in the context's cache. When the test ends, every page it opened is closed and
    what a test could leave behind for the next one is cleared: cookies (the session),
    permissions, routes, the site's local storage (a closed page takes its session storage
    along); the default timeout is set again for each test.
    """

    def __init__(self, browser: Any, parking_url: str) -> None:
        self.browser, self.parking_url = browser, parking_url
        self.idle: OrderedDict[tuple[str, ...], list[tuple[Any, Any]]] = OrderedDict()
        self.lent: list[tuple[tuple[str, ...], Any, Any]] = []

    def lend(self, **options: Any) -> Any:
        key = tuple(sorted(f"{name}={value!r}" for name, value in options.items()))
        kept = self.idle.get(key)
        if kept:
            context, parked = kept.pop()
            if not kept:
                del self.idle[key]
        else:
            context = self.browser.new_context(**options)
            parked = context.new_page()
            parked.goto(self.parking_url)
        context.set_default_timeout(10_000)
        self.lent.append((key, context, parked))
        return context

    def take_back(self) -> None:
        """Close the pages the test opened and clear its traces; keep the context."""
        lent, self.lent = self.lent, []
        for key, context, parked in lent:
            try:
                for page in context.pages:
                    if page is not parked:
                        page.close()
                context.clear_cookies()
                context.clear_permissions()
                context.unroute_all(behavior="ignoreErrors")
                parked.evaluate("() => localStorage.clear()")
            except Exception:
                # A context the test broke (or a browser that went away) is not lent again.
                with contextlib.suppress(Exception):
                    context.close()
                continue
            self.idle.setdefault(key, []).append((context, parked))
            self.idle.move_to_end(key)
        while sum(len(kept) for kept in self.idle.values()) > KEPT_CONTEXTS:
            _, kept = self.idle.popitem(last=False)
            for context, _parked in kept:
                context.close()

    def close(self) -> None:
        self.take_back()
        for kept in self.idle.values():
            for context, _parked in kept:
                context.close()
        self.idle.clear()


@pytest.fixture(scope="session")
def contexts(browser, live_server) -> Iterator[Contexts]:
    """The session's pool of browser contexts (``new_context`` lends them to a test)."""
    pool = Contexts(browser, f"{live_server.url}/static/agent_memory/htmx.LICENSE.txt")
    yield pool
    pool.close()


@pytest.fixture
def new_context(contexts):
    """Open browser contexts (``new_context(java_script_enabled=False, locale="ru-RU")``):
    each is the test's alone, starts without cookies or stored data, and its pages are closed
    after the test (the context itself is kept for a later test with the same options)."""

    def make(**options):
        options.setdefault("viewport", {"width": 1280, "height": 900})
        return contexts.lend(**options)

    yield make
    contexts.take_back()


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


#: The two window sizes the screen's layout tests use (``viewport``).
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(params=[True, False], ids=["htmx", "no-js"])
def js(request) -> bool:
    """With JavaScript (htmx) and without; a test can narrow it with an indirect parametrize."""
    return request.param


@pytest.fixture(params=[DESKTOP, PHONE], ids=["desktop", "phone"])
def viewport(request) -> dict[str, int]:
    """A desktop window and a phone's."""
    return request.param


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
