"""The example project's WSGI module loads the embedding model as a server process starts, so
the process's first search does not wait for it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .test_demo_command import ROOT, clean_environment

pytestmark = [pytest.mark.slow, pytest.mark.models]  # a fresh process loads the real models

LOADED = """
import example_project.wsgi
from agent_memory.embeddings import get_embedder
print([part._model is not None for part in get_embedder().parts])
"""


def test_the_server_process_has_its_embedding_model_before_the_first_request(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", LOADED],
        cwd=ROOT,
        env=clean_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[True, True]"
