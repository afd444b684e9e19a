"""The agent's delete in one statement on PostgreSQL: ``agent_memory_delete_alone`` learns to
delete only a note that is not pinned.

A note the person pinned is not the agent's to delete. The agent's delete read the note first
to see whether it was pinned (a round trip of its own, before the one that deleted); now the
function takes ``p_unpinned`` and, when it is true, deletes nothing if the note is pinned, so
the store reads and checks that note in full instead. Everything else is as in migration
``0010``: the person's advisory lock first, then the note at its version, still valid, with no
copy of its text beside the notes, and the person's counts row. Other databases get nothing.
"""

from django.db import migrations

from ._functions import dropped, made, made_by

EARLIER = made_by("0010_checked_write_functions", "agent_memory_delete_alone")

DELETE = """
CREATE OR REPLACE FUNCTION agent_memory_delete_alone(
    p_user anyelement, p_space integer, p_key integer, p_note bigint, p_version integer,
    p_now timestamptz, p_erased jsonb, p_unpinned boolean
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    v_content text;
BEGIN
    PERFORM pg_advisory_xact_lock(p_space, p_key);
    PERFORM 1 FROM agent_memory_memorynote
      WHERE user_id = p_user AND id = p_note AND version = p_version
        AND (valid_until IS NULL OR valid_until > p_now) AND NOT (p_unpinned AND pinned);
    IF NOT FOUND
       OR NOT EXISTS (SELECT 1 FROM agent_memory_memoryuserlock WHERE user_id = p_user)
       OR EXISTS (SELECT 1 FROM agent_memory_mergednotesnapshot
                   WHERE user_id = p_user AND merged_note_id = p_note)
       OR EXISTS (SELECT 1 FROM agent_memory_mergerun
                   WHERE user_id = p_user AND proposals <> p_erased) THEN
        RETURN NULL;
    END IF;
    DELETE FROM agent_memory_memorynoteversion WHERE note_id = p_note;
    DELETE FROM agent_memory_notevector WHERE note_id = p_note;
    DELETE FROM agent_memory_memorynote WHERE id = p_note RETURNING content INTO v_content;
    UPDATE agent_memory_memoryuserlock
       SET note_count = note_count - 1, total_chars = total_chars - length(v_content)
     WHERE user_id = p_user;
    RETURN v_content;
END $$;
"""

FUNCTIONS = {
    "agent_memory_delete_alone": (
        DELETE,
        "anyelement, integer, integer, bigint, integer, timestamptz, jsonb, boolean",
    ),
}


class Migration(migrations.Migration):

    dependencies = [
        ('agent_memory', '0011_one_note_create_function'),
    ]

    operations = [
        dropped(EARLIER),
        made(FUNCTIONS),
    ]
