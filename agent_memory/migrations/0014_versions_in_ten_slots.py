"""A note's earlier versions in ten slots: keeping one writes over the version ten older.

Keeping the note's earlier version added a row to ``agent_memory_memorynoteversion`` and, from
the eleventh change on, deleted the row ten versions older: on PostgreSQL a new row and three
index entries, then a delete, on every change. Each row now has a ``slot`` (its version modulo
ten), one row per note and slot: the version kept goes into its slot, in place of the one ten
versions older (``INSERT … ON CONFLICT (note_id, slot) DO UPDATE``). None of the indexed columns
change then, so on PostgreSQL the row is changed where it lies (a HOT update: no index entry
written), on pages kept half empty for it (``fillfactor = 50``). A note has at most ten rows
here by construction (the unique slot, and a check that a slot is below ten).

Rows already kept get their slot; where two of a note's rows would share one (only versions
more than ten apart, which the app never keeps together), the newer stays.
``agent_memory_update_note_in_room`` keeps its name, arguments and answer; it keeps the
version in its slot. Going back restores the earlier function and the unique version.
"""

from functools import partial

from django.db import migrations, models

from ._functions import made_by, replaced

EARLIER = made_by("0013_update_note_returns_what_it_keeps", "agent_memory_update_note_in_room")

UPDATE_NOTE = """
CREATE OR REPLACE FUNCTION agent_memory_update_note_in_room(
    p_user anyelement, p_space integer, p_key integer, p_note bigint, p_version integer,
    p_max_chars bigint, p_same_valid_until boolean, p_keep_versions integer,
    p_categories jsonb, p_content text, p_length bigint, p_text_key varchar, p_source text,
    p_origin text, p_pinned boolean, p_valid_until timestamptz, p_now timestamptz
) RETURNS TABLE (created_at timestamptz, created_by varchar) LANGUAGE plpgsql AS $$
DECLARE
    v_length bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(p_space, p_key);
    SELECT length(note.content) INTO v_length FROM agent_memory_memorynote AS note
     WHERE note.user_id = p_user AND note.id = p_note AND note.version = p_version
       AND NOT note.pinned AND (note.valid_until IS NULL OR note.valid_until > p_now)
       AND (NOT p_same_valid_until OR note.valid_until IS NOT DISTINCT FROM p_valid_until)
       AND NOT EXISTS (SELECT 1 FROM agent_memory_memorynote AS other
                        WHERE other.user_id = p_user AND other.text_key = p_text_key
                          AND other.id <> p_note);
    IF NOT FOUND THEN
        RETURN;
    END IF;
    -- An edit of the same length leaves the person's counts as they are.
    IF p_length <> v_length THEN
        UPDATE agent_memory_memoryuserlock AS counts
           SET total_chars = counts.total_chars + p_length - v_length
         WHERE counts.user_id = p_user
           AND (p_length < v_length OR counts.total_chars + p_length - v_length <= p_max_chars);
        IF NOT FOUND THEN
            RETURN;
        END IF;
    END IF;
    INSERT INTO agent_memory_memorynoteversion AS kept (
        note_id, user_id, version, slot, categories, content, pinned, valid_until, source,
        changed_at
    ) SELECT note.id, note.user_id, note.version, note.version % p_keep_versions,
             note.categories, note.content, note.pinned, note.valid_until, note.source,
             note.updated_at
        FROM agent_memory_memorynote AS note WHERE note.id = p_note
    ON CONFLICT (note_id, slot) DO UPDATE
       SET version = excluded.version, categories = excluded.categories,
           content = excluded.content, pinned = excluded.pinned,
           valid_until = excluded.valid_until, source = excluded.source,
           changed_at = excluded.changed_at;
    -- The answer's columns are variables here too: every column below names its table.
    RETURN QUERY UPDATE agent_memory_memorynote AS note
       SET categories = p_categories, content = p_content, text_key = p_text_key,
           source = p_source, origin = p_origin, pinned = COALESCE(p_pinned, note.pinned),
           valid_until = p_valid_until, updated_at = p_now, version = note.version + 1
     WHERE note.id = p_note RETURNING note.created_at, note.created_by;
END $$;
"""

FUNCTIONS = {
    "agent_memory_update_note_in_room": (
        UPDATE_NOTE,
        "anyelement, integer, integer, bigint, integer, bigint, boolean, integer, jsonb, text, "
        "bigint, varchar, text, text, boolean, timestamptz, timestamptz",
    ),
}

VERSIONS = "agent_memory_memorynoteversion"
SLOTS = 10


def _slotted(apps, schema_editor):
    """Give each kept version its slot, the newer of two that would share one staying (sent
    without parameters, so ``%`` is the modulo and no placeholder)."""
    quote = schema_editor.quote_name
    table = quote(VERSIONS)
    note, version, slot = quote("note_id"), quote("version"), quote("slot")
    schema_editor.execute(
        f"DELETE FROM {table} WHERE EXISTS (SELECT 1 FROM {table} AS newer "
        f"WHERE newer.{note} = {table}.{note} AND newer.{version} > {table}.{version} "
        f"AND newer.{version} % {SLOTS} = {table}.{version} % {SLOTS})",
        params=None,
    )
    schema_editor.execute(f"UPDATE {table} SET {slot} = {version} % {SLOTS}", params=None)


def _fill(factor, apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    setting = "RESET (fillfactor)" if factor is None else f"SET (fillfactor = {factor})"
    schema_editor.execute(f"ALTER TABLE {schema_editor.quote_name(VERSIONS)} {setting}")


class Migration(migrations.Migration):

    dependencies = [
        ('agent_memory', '0013_update_note_returns_what_it_keeps'),
    ]

    operations = [
        migrations.AddField(
            model_name='memorynoteversion',
            name='slot',
            field=models.PositiveSmallIntegerField(default=0, editable=False, verbose_name='slot'),
            preserve_default=False,
        ),
        migrations.RunPython(_slotted, migrations.RunPython.noop),
        migrations.RemoveConstraint(
            model_name='memorynoteversion',
            name='agent_memory_version_once',
        ),
        migrations.AddConstraint(
            model_name='memorynoteversion',
            constraint=models.UniqueConstraint(
                fields=('note', 'slot'), name='agent_memory_version_slot'
            ),
        ),
        migrations.AddConstraint(
            model_name='memorynoteversion',
            constraint=models.CheckConstraint(
                condition=models.Q(('slot__lt', SLOTS)), name='agent_memory_version_slots'
            ),
        ),
        migrations.RunPython(partial(_fill, 50), partial(_fill, None)),
        replaced(EARLIER, FUNCTIONS),
    ]
