"""What the API's schema says of its errors and parameters (drf-spectacular declarations)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse

from . import serializers

#: What each error status means, for the schema.
ERROR_DESCRIPTIONS = {
    400: "invalid: the body or a parameter is not valid; the message says what to fix.",
    401: "not_authenticated / authentication_failed: no person could be resolved.",
    403: "not_authenticated / permission_denied (e.g. a missing CSRF token with session or "
    "Basic auth).",
    404: "not_found: no such note or merge for this person (another person's looks the same), "
    "or memory is switched off.",
    409: "stale_version, duplicate, limit_reached or conflict: the message says what to do next.",
    415: "unsupported_media_type: send application/json.",
    429: "busy: the site already runs as many imports as it allows at once; nothing was read "
    "or written. Retry after the seconds in Retry-After.",
    503: "unavailable: the database did not answer; nothing was changed. Retry after the "
    "seconds in Retry-After.",
}


def error_responses(*codes: int) -> dict[int, OpenApiResponse]:
    """The documented error answers of an action: ``codes`` plus the ones every action has."""
    wanted = sorted({401, 403, 404, 503, *codes})
    return {
        code: OpenApiResponse(serializers.MemoryErrorSerializer, ERROR_DESCRIPTIONS[code])
        for code in wanted
    }


NOTE_ID = OpenApiParameter(
    "id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The note's id."
)
RUN_ID = OpenApiParameter(
    "run_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The merge run's id."
)
SEARCH_QUERY = OpenApiParameter(
    "q",
    OpenApiTypes.STR,
    OpenApiParameter.QUERY,
    required=False,
    description=(
        "Search instead of listing: words to look for, or memory:<id>. The answer is then "
        '{"notes", "total"}, ranked like the tool\'s search (word stems fused with meaning).'
    ),
)
VERSION = OpenApiParameter(
    "version",
    OpenApiTypes.INT,
    OpenApiParameter.QUERY,
    required=True,
    description="The version of the note you read.",
)

IMPORT_CATEGORIES = OpenApiParameter(
    "categories",
    OpenApiTypes.STR,
    OpenApiParameter.QUERY,
    required=False,
    description="For a text/plain body: the categories of its notes, separated by commas "
    '(default "Imported").',
)
