"""The optimizer: the model proposes merges of duplicate notes, code checks and applies them.

``policy`` (what runs and merges do to the stores' records), ``proposer`` (prompt and
parser), ``checker`` (the rules of a good merge), ``backends`` (model clients), ``runner``
(claim, apply, finish), ``reverts`` (listing and reverting past merges) and ``queue`` (handing
runs to django-q2, and the sweep's schedule). The django-q2 tasks themselves live in
:mod:`agent_memory.tasks`, above the front door they build.
"""
