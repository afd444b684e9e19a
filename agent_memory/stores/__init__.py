"""Stores keep the notes: :class:`~agent_memory.stores.orm.DjangoStore` (the default, Django's
ORM on SQLite or PostgreSQL) and :class:`~agent_memory.stores.memory.InMemoryStore`. The protocol
they follow is in :mod:`agent_memory.stores.base`."""
