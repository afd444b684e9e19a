"""One JSON request to a model or embedding server, through the standard library (``urllib``).

The optimizer's model backends and the HTTP embedding backend both call :func:`post_json`, so
no SDK is needed and tests can point them at a local server.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


class BackendError(RuntimeError):
    """The server could not be asked: bad answer, HTTP error, timeout or refused connection."""


def post_json(url: str, body: dict[str, Any], headers: dict[str, str], timeout: float) -> Any:
    """POST ``body`` as JSON to ``url`` and return the decoded JSON answer."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **headers},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as error:
        raise BackendError(f"The model server answered HTTP {error.code}.") from error
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        raise BackendError(f"The model server could not be reached: {error}.") from error
    except ValueError as error:
        raise BackendError("The model server's answer is not JSON.") from error


__all__ = ["BackendError", "post_json"]
