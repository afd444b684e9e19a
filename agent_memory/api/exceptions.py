"""Every failure of the HTTP API answers ``{"error": {"kind", "message"}}``.

:func:`memory_exception_handler` first lets DRF's own ``exception_handler`` build the response
(status, ``WWW-Authenticate``, a ``429``'s ``Retry-After``, transaction rollback) and then
reshapes the body. The API's base view attaches it through ``get_exception_handler``, so the
host's ``REST_FRAMEWORK`` settings stay as they are.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.db import Error as DatabaseFailure
from django.http import Http404
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler

from ..errors import RETRY_AFTER_SECONDS, AgentMemoryError, TooManyImports

logger = logging.getLogger("agent_memory.api")

#: HTTP status of each error kind of the memory core.
KIND_STATUS = {
    "invalid": status.HTTP_400_BAD_REQUEST,
    "not_found": status.HTTP_404_NOT_FOUND,
    "stale_version": status.HTTP_409_CONFLICT,
    "duplicate": status.HTTP_409_CONFLICT,
    "limit_reached": status.HTTP_409_CONFLICT,
    "conflict": status.HTTP_409_CONFLICT,
    # A pinned note is the person's: only the agent's paths meet this, not the person's.
    "read_only": status.HTTP_409_CONFLICT,
    "disabled": status.HTTP_409_CONFLICT,
    # Every import slot of the site is taken: try again after Retry-After seconds.
    "busy": status.HTTP_429_TOO_MANY_REQUESTS,
}


class Conflict(exceptions.APIException):
    """409: the request clashes with the notes as they are now."""

    status_code = status.HTTP_409_CONFLICT
    default_detail = gettext_lazy("The request conflicts with the current notes.")
    default_code = "conflict"


class BadRequest(exceptions.APIException):
    """400 with the core's own message (kind ``invalid``)."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = gettext_lazy("The request is not valid.")
    default_code = "invalid"


class Busy(exceptions.APIException):
    """429: the site runs as many imports as it allows at once; nothing was read or written.
    ``Retry-After`` (``wait``) says when to try again."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_detail = gettext_lazy("The site is busy. Try again in a few seconds.")
    default_code = "busy"

    def __init__(self, detail: str, *, wait: int) -> None:
        super().__init__(detail, code=self.default_code)
        self.wait = wait


class Unavailable(exceptions.APIException):
    """503: the database did not answer (connection dropped, server restarting, lock timeout).
    Nothing was changed by the failed request (its transaction was rolled back); retry it."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = gettext_lazy(
        "Memory is unavailable for a moment: the database did not answer. Nothing was changed. "
        "Try again in a few seconds."
    )
    default_code = "unavailable"


def as_api_exception(error: AgentMemoryError) -> exceptions.APIException:
    """The DRF exception that carries a core error with its kind and message."""
    code = KIND_STATUS.get(error.kind, status.HTTP_400_BAD_REQUEST)
    if isinstance(error, TooManyImports):
        return Busy(error.message, wait=error.retry_after)
    if code == status.HTTP_404_NOT_FOUND:
        return exceptions.NotFound(error.message, code=error.kind)
    if code == status.HTTP_409_CONFLICT:
        return Conflict(error.message, code=error.kind)
    return BadRequest(error.message, code=error.kind)


def memory_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's ``exception_handler`` with the body reshaped to ``{"error": {"kind", "message"}}``."""
    if isinstance(exc, AgentMemoryError):
        exc = as_api_exception(exc)
    elif isinstance(exc, RequestDataTooBig):
        exc = BadRequest(_("The request body is too large: send one note at a time."))
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    elif isinstance(exc, DatabaseFailure):
        log_database_failure(exc, context.get("request"))
        exc = Unavailable()
    response = exception_handler(exc, context)
    if response is None or not isinstance(exc, exceptions.APIException):
        return response  # not an API error: a real 500, left to Django's logging
    kind, message = describe(exc)
    response.data = {"error": {"kind": kind, "message": message}}
    if isinstance(exc, Unavailable):
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def log_database_failure(exc: Exception, request: Any) -> None:
    """Log a database failure answered with 503: the exception's class and the address only,
    since a driver's message may quote the data it was writing (note text stays out of logs)."""
    logger.warning(
        "The database failed during %s %s (%s.%s); answered 503.",
        getattr(request, "method", "?"),
        getattr(request, "path", "?"),
        type(exc).__module__,
        type(exc).__qualname__,
    )


def describe(exc: exceptions.APIException) -> tuple[str, str]:
    """The ``kind`` and human ``message`` of an exception DRF knows how to answer."""
    if isinstance(exc, exceptions.ValidationError):
        return "invalid", flatten(exc.detail) or _("The request is not valid.")
    if isinstance(exc, exceptions.ParseError):
        return "invalid", _(
            "The body is not valid JSON ({detail}). Send a JSON object, for example "
            '{{"categories": ["Preferences"], "content": "Address me informally."}}.'
        ).format(detail=str(exc.detail).rstrip("."))
    if exc.status_code == status.HTTP_404_NOT_FOUND:
        kind = "not_found"
    else:
        codes = exc.get_codes()
        kind = codes if isinstance(codes, str) else exc.default_code
    return str(kind), flatten(exc.detail)


def flatten(detail: Any, prefix: str = "") -> str:
    """One readable line from DRF's nested error details: ``"content: This field is required."``"""
    if isinstance(detail, dict):
        parts = []
        for key, value in detail.items():
            name = "" if key == api_settings.NON_FIELD_ERRORS_KEY else str(key)
            parts.append(flatten(value, f"{prefix}.{name}" if prefix and name else prefix or name))
        return " ".join(part for part in parts if part)
    if isinstance(detail, (list, tuple)):
        return " ".join(part for part in (flatten(item, prefix) for item in detail) if part)
    text = str(detail)
    return f"{prefix}: {text}" if prefix else text
