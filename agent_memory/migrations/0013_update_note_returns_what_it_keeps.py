"""The checked update on PostgreSQL answers with the two values the store does not know.

``agent_memory_update_in_room`` (migration ``0010``) returned the whole changed note; the store
had sent every value of it but the note's creation (when and by whom), and the server packed
the row into a set and the client unpacked its text, categories and dates again: about a tenth
of a millisecond of a call that costs half a millisecond. ``agent_memory_update_note_in_room``
does the same update (the person's advisory lock, the note at its version, not pinned, still
valid, its end kept when asked, no other note of theirs with the new text, the growth within
the room, the earlier version kept and all but the last ``p_keep_versions`` forgotten) and
returns ``created_at`` and ``created_by`` of the changed note, or no row if nothing was
written. It has a name of its own, so code that expects the earlier answer never calls it.
Other databases get nothing.
"""

from django.db import migrations

from ._functions import dropped, made, made_by

EARLIER = made_by("0010_checked_write_functions", "agent_memory_update_in_room")

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
    UPDATE agent_memory_memoryuserlock AS counts
       SET total_chars = counts.total_chars + p_length - v_length
     WHERE counts.user_id = p_user
       AND (p_length <= v_length OR counts.total_chars + p_length - v_length <= p_max_chars);
    IF NOT FOUND THEN
        RETURN;
    END IF;
    INSERT INTO agent_memory_memorynoteversion (
        note_id, user_id, version, categories, content, pinned, valid_until, source, changed_at
    ) SELECT note.id, note.user_id, note.version, note.categories, note.content, note.pinned,
             note.valid_until, note.source, note.updated_at
        FROM agent_memory_memorynote AS note WHERE note.id = p_note;
    IF p_version > p_keep_versions THEN
        DELETE FROM agent_memory_memorynoteversion AS kept
         WHERE kept.note_id = p_note AND kept.user_id = p_user
           AND kept.version <= p_version - p_keep_versions;
    END IF;
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


class Migration(migrations.Migration):

    dependencies = [
        ('agent_memory', '0012_delete_alone_unpinned'),
    ]

    operations = [
        dropped(EARLIER),
        made(FUNCTIONS),
    ]
