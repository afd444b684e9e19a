"""The HTTP API's views: thin shells over :class:`~agent_memory.LongTermMemory`."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema
from rest_framework import exceptions, permissions, status, viewsets
from rest_framework import serializers as drf_serializers
from rest_framework.authentication import (
    BasicAuthentication,
    RemoteUserAuthentication,
    SessionAuthentication,
)
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..conf import memory_settings
from ..kinds import NoteSource
from ..memory import LongTermMemory
from ..people import resolve_person
from ..rules import parse_id
from ..site import get_memory
from ..transfer import check_import_size, parse_text
from . import serializers
from .exceptions import memory_exception_handler
from .parsers import MemoryJSONParser, PlainTextParser
from .permissions import HasMemoryPerson
from .schema import IMPORT_CATEGORIES, NOTE_ID, RUN_ID, SEARCH_QUERY, VERSION, error_responses


class MemoryAPIView(APIView):
    """Base of the memory API's views.

    The person is ``RESOLVE_USER(request)``; the host's authentication classes apply. Unsafe
    methods are CSRF-checked whatever the authentication: session auth checks it itself, and
    credentials a browser sends by itself (``ambient_authentication``: HTTP Basic, the web
    server's ``REMOTE_USER``) are checked here, because DRF does not; a cross-site form can
    then change nothing. Header tokens a page cannot set cross-site (DRF's
    ``TokenAuthentication``, JWT bearer tokens) need no CSRF token. Every failure is answered by
    :func:`~agent_memory.api.exceptions.memory_exception_handler`. The memory is the site's
    (``AGENT_MEMORY["STORE"]``); override :meth:`get_memory` to serve another one.
    """

    permission_classes = [HasMemoryPerson]
    parser_classes = [MemoryJSONParser]
    renderer_classes = [JSONRenderer]

    #: Authentication a browser attaches to cross-site requests by itself, without CSRF
    #: checks of its own: unsafe methods authenticated this way must carry the CSRF token.
    ambient_authentication: tuple[type, ...] = (BasicAuthentication, RemoteUserAuthentication)

    _person: Any = None

    def get_exception_handler(self) -> Any:
        return memory_exception_handler

    def perform_authentication(self, request: Request) -> None:
        super().perform_authentication(request)
        authenticator = request.successful_authenticator
        if request.method not in permissions.SAFE_METHODS and isinstance(
            authenticator, self.ambient_authentication
        ):
            # The same check (token, Origin, Referer) DRF's session authentication makes.
            SessionAuthentication().enforce_csrf(request)

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        if not memory_settings.ENABLED:
            # Switched off: every address answers as if it did not exist.
            raise exceptions.NotFound(_("Memory is switched off on this site."))
        super().initial(request, *args, **kwargs)

    def get_person(self) -> Any:
        """The person the request acts for (resolved once per request), or ``None``."""
        if self._person is None:
            self._person = resolve_person(self.request)
        return self._person

    def get_memory(self) -> LongTermMemory:
        """The memory the request works on: the site's (:func:`agent_memory.get_memory`)."""
        return get_memory()


def answer(
    serializer: type[drf_serializers.Serializer[Any]],
    value: Any,
    code: int = status.HTTP_200_OK,
    headers: dict[str, str] | None = None,
) -> Response:
    """A response with ``value`` rendered by ``serializer``, the one the schema documents."""
    return Response(serializer(value).data, status=code, headers=headers)


def body_length(request: Request) -> int:
    """The length the request declares for its body (``Content-Length``), 0 when none."""
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0


def id_from_url(value: Any) -> int:
    """A note or run id from the URL, parsed strictly (:func:`~agent_memory.rules.parse_id`:
    ASCII digits that fit the database); anything else is a missing one (404)."""
    number = parse_id(value)
    if number is None:
        raise exceptions.NotFound(
            _("There is no such note or merge. Reload the list to see the current ones.")
        )
    return number


class MemoryViewSet(viewsets.ViewSetMixin, MemoryAPIView):
    """The person's notes: list, add, edit, delete, erase all, and automatic merges."""

    lookup_url_kwarg = "id"
    lookup_value_regex = "[^/]+"

    @extend_schema(
        tags=["memory"],
        operation_id="memory_list",
        summary="The person's notes with counts, or a search of them",
        parameters=[SEARCH_QUERY],
        responses={
            200: PolymorphicProxySerializer(
                component_name="MemoryListOrSearch",
                serializers=[serializers.MemoryListSerializer, serializers.MemorySearchSerializer],
                resource_type_field_name=None,
            ),
            **error_responses(400),
        },
    )
    def notes(self, request: Request) -> Response:
        """The person's notes, most recently changed first, with ``counts``: ``total`` notes,
        their ``limit`` (MAX_NOTES) and how many are ``shown`` to the agent (fit in its block).

        With ``?q=``: a search, ``{"notes": [best matches], "total": N}``, the same ranking as
        the tool's search."""
        memory, person = self.get_memory(), self.get_person()
        query = request.query_params.get("q")
        if query is not None:
            return answer(serializers.MemorySearchSerializer, memory.search(person, query))
        overview = memory.overview(person)
        return answer(
            serializers.MemoryListSerializer, {"notes": overview.notes, "counts": overview}
        )

    @extend_schema(
        tags=["memory"],
        operation_id="memory_create",
        summary="Add a note",
        request=serializers.NoteInputSerializer,
        responses={
            201: serializers.MemoryNoteAnswerSerializer,
            **error_responses(400, 409, 415),
        },
    )
    def create(self, request: Request) -> Response:
        """Add a note written by the person. The same rules as for the agent apply: 1 to 3
        categories, 1 to 500 characters, no secrets, no duplicates, the limits. ``"pinned":
        true`` pins it (pinned notes together take at most half of the agent's block)."""
        body = serializers.NoteInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        pinned = body.validated_data.pop("pinned", False)
        (note,) = self.get_memory().create_notes(
            self.get_person(), [body.validated_data], source=NoteSource.PERSON, pinned=pinned
        )
        return answer(
            serializers.MemoryNoteAnswerSerializer, {"note": note}, status.HTTP_201_CREATED
        )

    @extend_schema(
        tags=["memory"],
        operation_id="memory_update",
        summary="Change a note's categories and text",
        parameters=[NOTE_ID],
        request=serializers.NoteUpdateSerializer,
        responses={
            200: serializers.MemoryNoteAnswerSerializer,
            **error_responses(400, 409, 415),
        },
    )
    def partial_update(self, request: Request, id: str) -> Response:
        """Replace a note's categories and text, if it is still at the ``version`` you read
        (409 ``stale_version`` otherwise: reload it and retry). ``pinned`` pins or unpins it
        (omitted: as it is); ``{"version", "pinned"}`` alone changes only that."""
        note_id = id_from_url(id)
        body = serializers.NoteUpdateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        values = body.validated_data
        memory, person = self.get_memory(), self.get_person()
        if "content" not in values:
            note = memory.set_pinned(person, note_id, values["version"], values["pinned"])
        else:
            # valid_until left out keeps the note's end; null removes it.
            until = {name: value for name, value in values.items() if name == "valid_until"}
            note = memory.update_note(
                person,
                note_id,
                values["version"],
                values["categories"],
                values["content"],
                source=NoteSource.PERSON,
                pinned=values.get("pinned"),
                **until,
            )
        return answer(serializers.MemoryNoteAnswerSerializer, {"note": note})

    @extend_schema(
        tags=["memory"],
        operation_id="memory_history",
        summary="A note's earlier versions",
        parameters=[NOTE_ID],
        responses={200: serializers.NoteHistorySerializer, **error_responses(400)},
    )
    @action(detail=True, methods=["get"], url_path="history")
    def history(self, request: Request, id: str) -> Response:
        """The note's earlier versions (the last 10), newest first: who wrote each and when."""
        versions = self.get_memory().history(self.get_person(), id_from_url(id))
        return answer(
            serializers.NoteHistorySerializer,
            {"versions": [version.as_dict() for version in versions]},
        )

    @extend_schema(
        tags=["memory"],
        operation_id="memory_destroy",
        summary="Delete a note",
        parameters=[NOTE_ID, VERSION],
        request=None,
        responses={204: None, **error_responses(400, 409)},
    )
    def destroy(self, request: Request, id: str) -> Response:
        """Delete a note, if it is still at ``?version=N`` (409 ``stale_version`` otherwise)."""
        note_id = id_from_url(id)
        query = serializers.VersionQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        self.get_memory().delete_note(
            self.get_person(), note_id, query.validated_data["version"], source=NoteSource.PERSON
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        tags=["memory"],
        operation_id="memory_erase",
        summary="Erase the person's whole memory",
        request=None,
        responses={200: serializers.MemoryErasedSerializer, **error_responses()},
    )
    def clear(self, request: Request) -> Response:
        """Erase the person's whole memory: notes and merge snapshots."""
        deleted = self.get_memory().clear(self.get_person())
        return answer(serializers.MemoryErasedSerializer, {"deleted": deleted})

    @extend_schema(
        methods=["GET"],
        tags=["memory"],
        operation_id="memory_settings",
        summary="The person's memory switch",
        responses={200: serializers.MemorySettingsSerializer, **error_responses()},
    )
    @extend_schema(
        methods=["PATCH"],
        tags=["memory"],
        operation_id="memory_settings_update",
        summary="Turn the person's memory on or off",
        request=serializers.MemorySettingsSerializer,
        responses={200: serializers.MemorySettingsSerializer, **error_responses(400, 415)},
    )
    @action(detail=False, methods=["get", "patch"], url_path="settings", url_name="settings")
    def memory_settings(self, request: Request) -> Response:
        """``{"enabled": bool}``: whether the person's memory is on. Off, the agent neither
        sees nor saves notes, and the optimizer leaves them alone; the notes stay and can
        still be listed, edited, exported and erased here. On again, the next turn gets the
        full block."""
        memory, person = self.get_memory(), self.get_person()
        if request.method == "PATCH":
            body = serializers.MemorySettingsSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            memory.set_enabled(person, body.validated_data["enabled"])
        return answer(serializers.MemorySettingsSerializer, {"enabled": memory.enabled(person)})

    @extend_schema(
        tags=["memory"],
        operation_id="memory_merges",
        summary="Automatic merges that can still be reverted",
        responses={200: serializers.MergeListSerializer, **error_responses()},
    )
    @action(detail=False, methods=["get"], url_path="merges")
    def merges(self, request: Request) -> Response:
        """The automatic merges that can still be reverted, newest first, each with its merged
        notes and their originals. 404 when this memory cannot merge."""
        memory = self.merging_memory()
        return answer(serializers.MergeListSerializer, {"merges": memory.merges(self.get_person())})

    @extend_schema(
        tags=["memory"],
        operation_id="memory_merge_revert",
        summary="Revert an automatic merge: the original notes come back",
        parameters=[RUN_ID],
        request=serializers.MergeRevertRequestSerializer,
        responses={200: serializers.MergeRevertedSerializer, **error_responses(400, 409)},
    )
    @action(
        detail=False,
        methods=["post"],
        url_path=r"merges/(?P<run_id>[^/]+)/revert",
        url_name="revert-merge",
        # The body is optional: an empty form (what Django's test client and many HTTP clients
        # send by default) is no body, not an unsupported one.
        parser_classes=[MemoryJSONParser, FormParser, MultiPartParser],
    )
    def revert_merge(self, request: Request, run_id: str) -> Response:
        """Undo one merge run, or only its group ``{"group": n}``: the original notes come back
        with their ids and the merged notes go; the optimizer never merges them again. 409
        ``conflict`` if a merged note changed since, ``limit_reached`` or ``duplicate`` if the
        originals no longer fit."""
        number = id_from_url(run_id)
        memory = self.merging_memory()
        # Unknown or another person's run: 404 before the body is read at all.
        if not memory.has_merge(self.get_person(), number):
            raise exceptions.NotFound(
                _("There is no such merge to revert. Reload the list of merges.")
            )
        body = serializers.MergeRevertRequestSerializer(data=request.data or {})
        body.is_valid(raise_exception=True)
        group = body.validated_data.get("group")
        memory.revert_merge(self.get_person(), number, group)
        reverted = {"reverted": number} if group is None else {"reverted": number, "group": group}
        return answer(serializers.MergeRevertedSerializer, reverted)

    @extend_schema(
        tags=["memory"],
        operation_id="memory_export",
        summary="Download the person's memory as a JSON file",
        responses={200: serializers.MemoryExportSerializer, **error_responses()},
    )
    @action(detail=False, methods=["get"], url_path="export")
    def export(self, request: Request) -> Response:
        """The person's notes as a versioned JSON document, sent as an attachment
        (``memory-YYYY-MM-DD.json``); ``POST {base}/memory/import`` reads it back."""
        document = self.get_memory().export(self.get_person())
        filename = f"memory-{timezone.localdate().isoformat()}.json"
        return answer(
            serializers.MemoryExportSerializer,
            document,
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
        )

    @extend_schema(
        tags=["memory"],
        operation_id="memory_import",
        summary="Import notes: an export file, a list of notes, or one note per line",
        parameters=[IMPORT_CATEGORIES],
        request={
            "application/json": serializers.MemoryImportSerializer,
            "text/plain": OpenApiTypes.STR,
        },
        responses={
            200: serializers.MemoryImportedSerializer,
            **error_responses(400, 409, 415, 429),
        },
    )
    @action(
        detail=False,
        methods=["post"],
        url_path="import",
        url_name="import",
        parser_classes=[MemoryJSONParser, PlainTextParser],
    )
    def import_notes(self, request: Request) -> Response:
        """Add the notes of an export document (or a JSON list of ``{categories, content}``, or
        ``text/plain`` with one note per line and ``?categories=A,B``). Every note is checked
        like a create; notes already saved are skipped and listed. All or nothing: on any error
        nothing is written. 429 ``busy`` (with ``Retry-After``) when the site already runs
        ``MAX_CONCURRENT_IMPORTS`` imports: nothing was read; try again then."""
        # Refused from its declared length, before a byte of it is read or parsed.
        check_import_size(body_length(request))
        memory = self.get_memory()
        # One of the site's import slots, or 429 at once, before the body is read.
        with memory.import_slot():
            data = request.data
            if isinstance(data, str):
                if not request.content_type.startswith("text/plain"):
                    raise exceptions.ValidationError(
                        _(
                            "A JSON body must be an export file (an object) or a list of "
                            "notes. Send notes one per line as text/plain instead."
                        )
                    )
                data = parse_text(data)
            categories = [
                name.strip()
                for name in request.query_params.get("categories", "").split(",")
                if name.strip()
            ]
            result = memory.import_notes(self.get_person(), data, categories=categories or None)
        return answer(serializers.MemoryImportedSerializer, result.as_dict())

    def merging_memory(self) -> LongTermMemory:
        """The memory, if its store can merge; the merge addresses answer 404 otherwise."""
        memory = self.get_memory()
        if not memory.can_merge:
            raise exceptions.NotFound(_("Merges are not available: this memory cannot merge."))
        return memory


@extend_schema(exclude=True)
class UnknownAddressView(MemoryAPIView):
    """Any other address under ``{base}/memory``: the API's JSON 404, not the site's HTML page."""

    def http_method_not_allowed(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        raise exceptions.NotFound(
            _("There is no such address in the memory API. See its schema for the addresses.")
        )
