from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

SCHEDULE_RECEIVER = "agent_memory.optimizer.schedule"


class AgentMemoryConfig(AppConfig):
    name = "agent_memory"
    verbose_name = _("Agent memory")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from . import checks  # noqa: F401  (registers the system checks)
        from .optimizer.queue import ensure_schedule

        # The django-q2 schedule is created after migrate, never here: no database in ready().
        post_migrate.connect(ensure_schedule, sender=self, dispatch_uid=SCHEDULE_RECEIVER)
