"""The browser fixtures of the app's tests (``tests/browser/conftest.py``): Debian's Chromium,
one per session, and a context per test."""

from tests.browser.conftest import browser, new_context, page, page_in, screenshots  # noqa: F401
