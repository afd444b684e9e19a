"""Counters of notes and characters per person, and an indexed key of each note's text.

Fills both for the notes already saved, so the limits and the duplicate check read only the
person's counters and the notes with the same text from now on.
"""

from django.conf import settings
from django.db import migrations, models
from django.db.models import Count, Sum
from django.db.models.functions import Length

from agent_memory.rules import text_digest

PAGE = 1000


def fill(apps, schema_editor):
    using = schema_editor.connection.alias
    notes = apps.get_model("agent_memory", "MemoryNote").objects.using(using)
    locks = apps.get_model("agent_memory", "MemoryUserLock").objects.using(using)
    last = 0
    while True:
        page = list(notes.filter(pk__gt=last).order_by("pk").only("pk", "content")[:PAGE])
        if not page:
            break
        for row in page:
            row.text_key = text_digest(row.content)
        notes.bulk_update(page, ["text_key"])
        last = page[-1].pk
    totals = notes.values("user_id").annotate(count=Count("pk"), chars=Sum(Length("content")))
    for item in totals.order_by("user_id"):
        locks.update_or_create(
            user_id=item["user_id"],
            defaults={"note_count": item["count"], "total_chars": item["chars"] or 0},
        )


class Migration(migrations.Migration):

    dependencies = [
        ('agent_memory', '0003_note_origin_reverted_groups'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='memorynote',
            name='text_key',
            field=models.CharField(default='', editable=False, max_length=32, verbose_name='text key'),
        ),
        migrations.AddField(
            model_name='memoryuserlock',
            name='note_count',
            field=models.BigIntegerField(default=0, verbose_name='notes'),
        ),
        migrations.AddField(
            model_name='memoryuserlock',
            name='total_chars',
            field=models.BigIntegerField(default=0, verbose_name='characters'),
        ),
        migrations.AddIndex(
            model_name='memorynote',
            index=models.Index(fields=['user', 'text_key'], name='agent_memory_note_text'),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop, elidable=True),
    ]
