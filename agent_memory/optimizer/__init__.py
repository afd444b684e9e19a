"""The optimizer: the model proposes merges of duplicate notes, code checks and applies them.

``policy`` (what runs and merges do to the stores' records), ``proposer`` (prompt and
parser), ``checker`` (the rules of a good merge), ``backends`` (model clients), ``runner``
(claim, apply, finish, revert) and ``tasks`` (the django-q2 sweep).
"""
