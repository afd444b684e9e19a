import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
application = get_wsgi_application()

# Load the embedding model as the server process starts, not on its first search.
from agent_memory.embeddings import warm_up  # noqa: E402

warm_up()
