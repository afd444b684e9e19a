"""What the migrations that make the app's PL/pgSQL functions share (not a migration: Django's
loader passes over modules whose names start with ``_``).

Each such migration names its functions as ``{name: (CREATE FUNCTION …, argument types)}`` and
runs :func:`made`: created going forward, dropped going back, on PostgreSQL only.
"""

from functools import partial
from importlib import import_module

from django.db import migrations


def _create(functions, apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for sql, _ in functions.values():
        # No parameters: a ``%`` in a function's body is its own (the modulo), no placeholder.
        schema_editor.execute(sql, params=None)


def _drop(functions, apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, (_, arguments) in functions.items():
        schema_editor.execute(f"DROP FUNCTION IF EXISTS {name}({arguments})")


def made(functions):
    """The operation that creates ``functions`` (and drops them when unapplied)."""
    return migrations.RunPython(partial(_create, functions), partial(_drop, functions))


def dropped(functions):
    """The operation that drops ``functions`` (created again when unapplied): for functions a
    later migration makes anew with other arguments."""
    return migrations.RunPython(partial(_drop, functions), partial(_create, functions))


def made_by(migration, name):
    """``{name: (CREATE FUNCTION …, argument types)}`` of the function ``name`` as the app's
    migration ``migration`` made it: what a later migration drops to make it anew."""
    functions = import_module(f"agent_memory.migrations.{migration}").FUNCTIONS
    return {name: functions[name]}


def replaced(earlier, functions):
    """The operation that makes ``functions`` anew with the same names and arguments as
    ``earlier`` (``earlier`` made again when unapplied)."""
    return migrations.RunPython(partial(_create, functions), partial(_create, earlier))
