"""A user model keyed by UUID, as many host projects have: the app's tables then key people by
``uuid`` columns, and its SQL (the write functions, the locks, the batches) must take them."""

from __future__ import annotations

import uuid

from django.contrib.auth.models import AbstractUser
from django.db import models


class Person(AbstractUser):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
