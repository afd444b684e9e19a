"""The browser fixtures of the app's tests (``tests/browser/conftest.py``): Debian's Chromium,
one per session, and the contexts it lends each test."""

from tests.browser.conftest import (  # noqa: F401
    browser,
    contexts,
    new_context,
    page,
    page_in,
    screenshots,
)
