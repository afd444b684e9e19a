"""The checked writes' first tries on PostgreSQL, as functions: one call, one statement.

Each takes the person's advisory lock, then reads and writes in statements of its own, so each
statement after the lock sees what the lock's previous holder committed (READ COMMITTED). Each
writes only if the write fits the room it is given, and says so: nothing written means the
store makes the write in full (see ``agent_memory.stores.orm_sql``). The person's id comes in
as the type of their column (``anyelement``), so any user model's key fits; text keys come in
as ``varchar``, the column's type, and are looked up one by one, so the index on them serves
whatever the planner guesses of the person's share of the table.
Other databases get nothing.
"""

from django.db import migrations

from ._functions import made

CREATE = """
CREATE OR REPLACE FUNCTION agent_memory_create_in_room(
    p_user anyelement, p_space integer, p_key integer, p_max_notes bigint, p_max_chars bigint,
    p_chars bigint, p_keys varchar[], p_categories text[], p_contents text[], p_sources text[],
    p_origins text[], p_valid_until timestamptz[], p_created_at timestamptz[], p_now timestamptz
) RETURNS bigint[] LANGUAGE plpgsql AS $$
DECLARE
    v_ids bigint[];
BEGIN
    PERFORM pg_advisory_xact_lock(p_space, p_key);
    UPDATE agent_memory_memoryuserlock
       SET note_count = note_count + cardinality(p_keys), total_chars = total_chars + p_chars
     WHERE user_id = p_user AND note_count + cardinality(p_keys) <= p_max_notes
       AND total_chars + p_chars <= p_max_chars
       AND NOT EXISTS (SELECT 1 FROM unnest(p_keys) AS given(text_key)
                        WHERE EXISTS (SELECT 1 FROM agent_memory_memorynote AS note
                                       WHERE note.user_id = p_user
                                         AND note.text_key = given.text_key));
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    -- Identities are drawn in the order the rows are inserted: the ids in order are the
    -- notes' in order.
    WITH written AS (
        INSERT INTO agent_memory_memorynote (
            user_id, categories, content, text_key, source, created_by, origin, pinned,
            valid_until, version, created_at, updated_at
        ) SELECT p_user, given.categories::jsonb, given.content, given.text_key, given.source,
                 given.source, given.origin, false, given.valid_until, 1,
                 COALESCE(given.created_at, p_now), p_now
            FROM unnest(p_categories, p_contents, p_keys, p_sources, p_origins, p_valid_until,
                        p_created_at)
                 WITH ORDINALITY AS given(categories, content, text_key, source, origin,
                                          valid_until, created_at, position)
           ORDER BY given.position
        RETURNING id
    ) SELECT array_agg(id ORDER BY id) INTO v_ids FROM written;
    RETURN v_ids;
END $$;
"""

UPDATE = """
CREATE OR REPLACE FUNCTION agent_memory_update_in_room(
    p_user anyelement, p_space integer, p_key integer, p_note bigint, p_version integer,
    p_max_chars bigint, p_same_valid_until boolean, p_keep_versions integer,
    p_categories jsonb, p_content text, p_length bigint, p_text_key varchar, p_source text,
    p_origin text, p_pinned boolean, p_valid_until timestamptz, p_now timestamptz
) RETURNS SETOF agent_memory_memorynote LANGUAGE plpgsql AS $$
DECLARE
    v_length bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(p_space, p_key);
    SELECT length(content) INTO v_length FROM agent_memory_memorynote
     WHERE user_id = p_user AND id = p_note AND version = p_version AND NOT pinned
       AND (valid_until IS NULL OR valid_until > p_now)
       AND (NOT p_same_valid_until OR valid_until IS NOT DISTINCT FROM p_valid_until)
       AND NOT EXISTS (SELECT 1 FROM agent_memory_memorynote
                        WHERE user_id = p_user AND text_key = p_text_key AND id <> p_note);
    IF NOT FOUND THEN
        RETURN;
    END IF;
    UPDATE agent_memory_memoryuserlock SET total_chars = total_chars + p_length - v_length
     WHERE user_id = p_user
       AND (p_length <= v_length OR total_chars + p_length - v_length <= p_max_chars);
    IF NOT FOUND THEN
        RETURN;
    END IF;
    INSERT INTO agent_memory_memorynoteversion (
        note_id, user_id, version, categories, content, pinned, valid_until, source, changed_at
    ) SELECT id, user_id, version, categories, content, pinned, valid_until, source, updated_at
        FROM agent_memory_memorynote WHERE id = p_note;
    IF p_version > p_keep_versions THEN
        DELETE FROM agent_memory_memorynoteversion
         WHERE note_id = p_note AND user_id = p_user AND version <= p_version - p_keep_versions;
    END IF;
    RETURN QUERY UPDATE agent_memory_memorynote
       SET categories = p_categories, content = p_content, text_key = p_text_key,
           source = p_source, origin = p_origin, pinned = COALESCE(p_pinned, pinned),
           valid_until = p_valid_until, updated_at = p_now, version = version + 1
     WHERE id = p_note RETURNING *;
END $$;
"""

DELETE = """
CREATE OR REPLACE FUNCTION agent_memory_delete_alone(
    p_user anyelement, p_space integer, p_key integer, p_note bigint, p_version integer,
    p_now timestamptz, p_erased jsonb
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    v_content text;
BEGIN
    PERFORM pg_advisory_xact_lock(p_space, p_key);
    PERFORM 1 FROM agent_memory_memorynote
      WHERE user_id = p_user AND id = p_note AND version = p_version
        AND (valid_until IS NULL OR valid_until > p_now);
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
    "agent_memory_create_in_room": (CREATE, "anyelement, integer, integer, bigint, bigint, "
                                    "bigint, varchar[], text[], text[], text[], text[], "
                                    "timestamptz[], timestamptz[], timestamptz"),
    "agent_memory_update_in_room": (UPDATE, "anyelement, integer, integer, bigint, integer, "
                                    "bigint, boolean, integer, jsonb, text, bigint, varchar, text, "
                                    "text, boolean, timestamptz, timestamptz"),
    "agent_memory_delete_alone": (DELETE, "anyelement, integer, integer, bigint, integer, "
                                  "timestamptz, jsonb"),
}


class Migration(migrations.Migration):

    dependencies = [
        ('agent_memory', '0009_person_indexes_with_their_columns'),
    ]

    operations = [
        made(FUNCTIONS),
    ]
