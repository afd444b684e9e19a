"""Shapes of the HTTP API's bodies.

The input serializers only check JSON types (a list of strings, a string, a whole number); every
rule about notes (lengths, secrets, duplicates, limits, versions) is the memory core's, and the
views pass the values on to :class:`~agent_memory.LongTermMemory` untouched. The output
serializers render the answers from the core's values (notes, the overview, merge records) and
describe them for the OpenAPI schema.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.settings import api_settings

from ..kinds import NoteSource
from ..notes import Note

#: The largest whole number the API accepts (a signed 64-bit integer).
MAX_INTEGER = 2**63 - 1


class TextField(serializers.CharField):
    """A JSON string, exactly: numbers and booleans are not turned into text."""

    default_error_messages = {"invalid": _("Must be text (a JSON string).")}

    def __init__(self, **kwargs: Any) -> None:
        # Blank text and surrounding spaces are for the core's rules to judge.
        kwargs.setdefault("allow_blank", True)
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class WholeNumberField(serializers.IntegerField):
    """A JSON whole number, exactly: no strings, floats or booleans."""

    default_error_messages = {"invalid": _("Must be a whole number.")}

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("min_value", -MAX_INTEGER - 1)
        kwargs.setdefault("max_value", MAX_INTEGER)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """A JSON ``true`` or ``false``, exactly: no ``"yes"``, ``1`` or ``"on"``."""

    default_error_messages = {
        "invalid": _("Must be true or false."),
        "null": _("Must be true or false."),
    }

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class BodySerializer(serializers.Serializer[Any]):
    """A request body: a JSON object; anything else is answered with the expected shape."""

    default_error_messages = {
        "invalid": _(
            'Send a JSON object with "categories" (a list of names) and "content" (text), plus '
            '"version" when editing; not {datatype}.'
        ),
    }

    def run_validation(self, data: Any = empty) -> Any:
        if data is None:  # a JSON ``null`` body
            message = self.error_messages["invalid"].format(datatype="null")
            raise serializers.ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [message]})
        return super().run_validation(data)


class NoteInputSerializer(BodySerializer):
    """``POST {base}/memory``: a new note."""

    categories = serializers.ListField(
        child=TextField(),
        help_text=_('1 to 3 category names, e.g. ["Preferences", "Language"].'),
    )
    content = TextField(help_text=_("The note's text, 1 to 500 characters; no secrets."))
    pinned = StrictBooleanField(
        required=False,
        help_text=_(
            "Pin the note: a standing rule the agent reads first and cannot change (default false)."
        ),
    )
    valid_until = TextField(
        required=False,
        allow_null=True,
        help_text=_(
            "When the note stops holding: a date YYYY-MM-DD (through the end of that day in the "
            "site's time zone) or a date-time with its offset, at most 10 years ahead; null for "
            "no end. On PATCH, leave it out to keep the note's end."
        ),
    )


class NoteUpdateSerializer(NoteInputSerializer):
    """``PATCH {base}/memory/<id>``: the note's new categories and text, and the version read;
    or only ``{"version", "pinned"}`` to pin or unpin it."""

    categories = serializers.ListField(
        child=TextField(),
        required=False,
        help_text=_(
            '1 to 3 category names, e.g. ["Preferences", "Language"]; with content, unless '
            "only pinned is sent."
        ),
    )
    content = TextField(
        required=False,
        help_text=_(
            "The note's text, 1 to 500 characters; with categories, unless only pinned is sent."
        ),
    )
    pinned = StrictBooleanField(
        required=False, help_text=_("Pin or unpin the note; omitted, it stays as it is.")
    )
    version = WholeNumberField(help_text=_("The version of the note you read."))

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "pinned" in attrs and not ({"categories", "content"} & attrs.keys()):
            return attrs  # a pin or an unpin alone
        missing = [name for name in ("categories", "content") if name not in attrs]
        if missing:
            raise serializers.ValidationError(
                {name: [_("This field is required.")] for name in missing}
            )
        return attrs

    # PATCH sends the whole note at a version, nothing is optional; the schema generator marks
    # PATCH bodies partial, so the flag is pinned off.
    @property
    def partial(self) -> bool:
        return False

    @partial.setter
    def partial(self, value: bool) -> None:
        pass


class VersionQuerySerializer(serializers.Serializer[Any]):
    """``DELETE {base}/memory/<id>?version=N``."""

    version = serializers.IntegerField(
        min_value=-MAX_INTEGER - 1,
        max_value=MAX_INTEGER,
        help_text=_("The version of the note you read."),
    )


# --- answers ---------------------------------------------------------------------------------


class IsoDateTimeField(serializers.DateTimeField):
    """A date and time written as Python's ``isoformat()`` in the value's own time zone (as the
    tool answers it); text already written is passed on as it is."""

    def to_representation(self, value: Any) -> Any:
        return value if value is None or isinstance(value, str) else value.isoformat()


class MemoryNoteSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField(help_text=_("Never reused; the model sees it as memory:<id>."))
    version = serializers.IntegerField(help_text=_("Starts at 1, +1 on every change."))
    categories = serializers.ListField(child=serializers.CharField())
    content = serializers.CharField()
    updated_at = IsoDateTimeField()
    # The metaclass takes declared fields out of the class, so this does not shadow the
    # ``source`` attribute every DRF field has; mypy cannot know that.
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=[source.value for source in NoteSource],
        help_text=_("Who wrote the note last: the agent, the person, a merge or admin staff."),
    )
    pinned = serializers.BooleanField(
        help_text=_("Pinned by the person: the agent reads it first and cannot change it.")
    )
    # Plain text, not a second enum: the schema names one choice set once (as source).
    created_by = serializers.CharField(
        help_text=_("Who wrote the note's first version: one of the values of source."),
    )
    valid_until = IsoDateTimeField(
        allow_null=True, help_text=_("When the note stops holding; null for no end.")
    )

    def to_representation(self, instance: Any) -> Any:
        # The same as the declared fields give (a test compares them), without DRF's per-field
        # machinery: a list of 200 notes rendered field by field cost several milliseconds,
        # more than reading the notes.
        if not isinstance(instance, Note):
            return super().to_representation(instance)
        updated = instance.updated_at
        return {
            "id": int(instance.id),
            "version": int(instance.version),
            "categories": [str(item) for item in instance.categories],
            "content": str(instance.content),
            "updated_at": updated
            if updated is None or isinstance(updated, str)
            else updated.isoformat(),
            "source": str(instance.source),
            "pinned": bool(instance.pinned),
            "created_by": str(instance.created_by),
            "valid_until": None
            if instance.valid_until is None
            else instance.valid_until.isoformat(),
        }


class NoteVersionSerializer(serializers.Serializer[Any]):
    version = serializers.IntegerField(help_text=_("The note's version this was."))
    categories = serializers.ListField(child=serializers.CharField())
    content = serializers.CharField()
    pinned = serializers.BooleanField()
    valid_until = IsoDateTimeField(allow_null=True)
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=[source.value for source in NoteSource], help_text=_("Who wrote this version.")
    )
    changed_at = IsoDateTimeField(help_text=_("When this version was written."))


class NoteHistorySerializer(serializers.Serializer[Any]):
    versions = NoteVersionSerializer(
        many=True, help_text=_("The note's earlier versions (the last 10), newest first.")
    )


class MemoryCountsSerializer(serializers.Serializer[Any]):
    total = serializers.IntegerField(help_text=_("How many notes the person has."))
    limit = serializers.IntegerField(help_text=_("MAX_NOTES: how many notes they may have."))
    shown = serializers.IntegerField(help_text=_("How many notes fit in the agent's block."))


class MemoryListSerializer(serializers.Serializer[Any]):
    notes = MemoryNoteSerializer(many=True, help_text=_("Most recently changed first."))
    counts = MemoryCountsSerializer()


class MemorySearchSerializer(serializers.Serializer[Any]):
    notes = MemoryNoteSerializer(
        many=True, help_text=_("The best matches (at most SEARCH_LIMIT), best first.")
    )
    total = serializers.IntegerField(
        help_text=_("How many notes match, by words or by meaning, including those not returned.")
    )


class MemoryNoteAnswerSerializer(serializers.Serializer[Any]):
    note = MemoryNoteSerializer()


class MemoryErasedSerializer(serializers.Serializer[Any]):
    deleted = serializers.IntegerField(help_text=_("How many notes were deleted."))


class MergeGroupSerializer(serializers.Serializer[Any]):
    group = serializers.IntegerField(help_text=_("The group's number, to revert only it."))
    merged = MemoryNoteSerializer(help_text=_("The note the sources were merged into."))
    sources = MemoryNoteSerializer(many=True, help_text=_("The notes as they were before."))


class MergeRunSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField(help_text=_("The merge run's id, to revert it."))
    finished_at = IsoDateTimeField()
    groups = MergeGroupSerializer(many=True)


class MergeListSerializer(serializers.Serializer[Any]):
    merges = MergeRunSerializer(many=True, help_text=_("Merges that can still be reverted."))


class MergeRevertedSerializer(serializers.Serializer[Any]):
    reverted = serializers.IntegerField(help_text=_("The id of the reverted merge run."))
    group = serializers.IntegerField(
        required=False, help_text=_("The reverted group, when only one group was reverted.")
    )


class MergeRevertRequestSerializer(serializers.Serializer[Any]):
    group = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=2_147_483_647,
        help_text=_("Revert only this group of the run (as listed in merges); omit for all."),
    )


class MemoryErrorDetailSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField(
        help_text=_(
            "invalid, not_found, stale_version, duplicate, limit_reached, conflict, read_only; "
            "and DRF's "
            "not_authenticated, authentication_failed, permission_denied, method_not_allowed, "
            "unsupported_media_type, not_acceptable, throttled."
        )
    )
    message = serializers.CharField(help_text=_("What went wrong and what to do next."))


class MemorySettingsSerializer(BodySerializer):
    """``GET``/``PATCH {base}/memory/settings``: the person's memory switch."""

    default_error_messages = {
        "invalid": _('Send a JSON object {{"enabled": true or false}}; not {datatype}.')
    }

    enabled = StrictBooleanField(
        help_text=_(
            "Memory on (default) or off. Off: the assistant neither sees nor saves notes; the "
            "notes stay and can still be seen, edited, exported and erased."
        )
    )

    # PATCH sends the switch itself, never optional (see NoteUpdateSerializer).
    @property
    def partial(self) -> bool:
        return False

    @partial.setter
    def partial(self, value: bool) -> None:
        pass


class MemoryErrorSerializer(serializers.Serializer[Any]):
    error = MemoryErrorDetailSerializer()


# --- export and import ----------------------------------------------------------------------


class ExportedNoteSerializer(serializers.Serializer[Any]):
    categories = serializers.ListField(child=serializers.CharField())
    content = serializers.CharField()
    # The metaclass takes declared fields out of the class, so this does not shadow
    # ``Field.source``; mypy cannot know that.
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=[source.value for source in NoteSource], help_text=_("Who wrote the note.")
    )
    pinned = serializers.BooleanField(help_text=_("Pinned by the person; imported pinned."))
    created_by = serializers.CharField(help_text=_("Who wrote its first version."))
    created_at = IsoDateTimeField()
    updated_at = IsoDateTimeField()
    valid_until = IsoDateTimeField(
        allow_null=True, help_text=_("When the note stops holding; null for no end.")
    )


class MemoryExportSerializer(serializers.Serializer[Any]):
    format = serializers.CharField(help_text=_('Always "agent_memory".'))
    version = serializers.IntegerField(help_text=_("The export's schema version (1)."))
    exported_at = IsoDateTimeField()
    notes = ExportedNoteSerializer(many=True, help_text=_("Oldest first."))


class ImportNoteSerializer(serializers.Serializer[Any]):
    categories = serializers.ListField(child=serializers.CharField())
    content = serializers.CharField()


class MemoryImportSerializer(serializers.Serializer[Any]):
    """What ``POST {base}/memory/import`` takes (for the schema; the core checks the body)."""

    format = serializers.CharField(required=False, help_text=_('"agent_memory", if given.'))
    version = serializers.IntegerField(required=False, help_text=_("The schema version (1)."))
    notes = ImportNoteSerializer(many=True)


class SkippedNoteSerializer(serializers.Serializer[Any]):
    content = serializers.CharField()
    reason = serializers.CharField(help_text=_("Why the note was not imported."))


class MemoryImportedSerializer(serializers.Serializer[Any]):
    created = serializers.IntegerField(help_text=_("How many notes were added."))
    skipped = SkippedNoteSerializer(
        many=True, help_text=_("Notes already saved or repeated in the import: not added.")
    )
