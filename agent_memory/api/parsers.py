"""The API's body parsers: JSON that answers 400 when nested too deep, and ``text/plain`` for an
import with one note per line, bounded before it is read."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from rest_framework import exceptions
from rest_framework.parsers import BaseParser, JSONParser

from ..transfer import MAX_IMPORT_BYTES, check_import_size


class MemoryJSONParser(JSONParser):
    """DRF's JSON parser, answering 400 for JSON nested too deep to read as well."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError(_("JSON nested too deeply")) from None


class PlainTextParser(BaseParser):
    """``text/plain`` bodies (an import with one note per line), read as UTF-8, at most
    :data:`~agent_memory.transfer.MAX_IMPORT_BYTES` of them."""

    media_type = "text/plain"

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        body = stream.read(MAX_IMPORT_BYTES + 1)
        check_import_size(len(body))
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            raise exceptions.ParseError(_("The text is not UTF-8; save it as UTF-8.")) from None
