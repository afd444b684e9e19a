import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
application = get_wsgi_application()

# Load the embedding model as the server process starts, not on its first search.
from agent_memory.embeddings import warm_up  # noqa: E402

warm_up()

# Keep the collector's full passes short. A process holding the model and Django's code has
# some 180,000 objects the collector would walk on every full pass (40-100 ms in the middle of
# a request); once this process has answered its first request (which imports the views),
# they are moved out of its reach for good.
import gc  # noqa: E402

from django.core.signals import request_finished  # noqa: E402


def _freeze_after_first_request(**kwargs: object) -> None:
    request_finished.disconnect(_freeze_after_first_request)
    gc.collect()
    gc.freeze()


request_finished.connect(_freeze_after_first_request)
