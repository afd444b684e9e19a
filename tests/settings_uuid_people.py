"""The app's test settings with people keyed by UUID (``tests.uuid_people.Person``)."""

from __future__ import annotations

from .settings import *  # noqa: F403
from .settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "tests.uuid_people"]
AUTH_USER_MODEL = "uuid_people.Person"
