"""``{% load agent_memory_admin %}``: the count under this app's admin lists, in words with the
right plural for the language ("5 запусков оптимизатора", not "5 запуски оптимизатора")."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.filter
def result_count(changelist: Any) -> str:
    """``{{ cl|result_count }}``: the admin's own ``count_label(n)``, else Django's wording."""
    count = changelist.result_count
    label = getattr(changelist.model_admin, "count_label", None)
    if label is not None:
        return str(label(count))
    opts = changelist.opts
    return f"{count} {opts.verbose_name if count == 1 else opts.verbose_name_plural}"
