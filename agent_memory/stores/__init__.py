"""Stores keep the notes: :class:`~agent_memory.stores.orm.DjangoStore` (the default, Django's
ORM on SQLite or PostgreSQL) and :class:`~agent_memory.stores.in_memory.InMemoryStore`. The
protocol they follow, the values they exchange and their base class are in
:mod:`agent_memory.stores.base`. Stores import nothing above them (not the optimizer): the merge
policy they follow is handed to them."""
