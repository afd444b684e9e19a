"""The optimizer through the front door: runs that merge duplicate notes, and their reverts.

:class:`MergeMemory` hands these to the :class:`~agent_memory.optimizer.runner.Optimizer` of
the memory's store; with the person's memory off, runs are skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import MemoryStorageNotSupportedError
from ..notes import Note
from ..optimizer.runner import OptimizationResult, Optimizer
from ..overview import RevertableMerge
from .notes import UNSET as _UNSET
from .notes import NoteMemory


class MergeMemory(NoteMemory):
    """The optimizer's members of :class:`~agent_memory.LongTermMemory`."""

    _optimizer: Optimizer

    @staticmethod
    def _resolve_optimizer(store: Any, optimizer: Any) -> dict[str, Any] | None:
        """The options this object's optimizer runs with over ``AGENT_MEMORY["OPTIMIZER"]``
        (``{}``: the settings alone), or ``None`` for off: unset, it is on when the store can
        merge (``store.can_merge``)."""
        can_merge = store.can_merge
        if optimizer is _UNSET or optimizer is None or optimizer is True:
            if optimizer is True and not can_merge:
                raise MemoryStorageNotSupportedError(
                    ["_merge_notes", "_unmerge_notes"], feature="the optimizer (merges)"
                )
            return {} if can_merge else None
        if optimizer is False:
            return None
        if not isinstance(optimizer, Mapping):
            raise TypeError(
                "optimizer must be a dict of options (keys of AGENT_MEMORY['OPTIMIZER']), "
                f"True, False or left unset, not {type(optimizer).__name__}."
            )
        if not can_merge:
            raise MemoryStorageNotSupportedError(
                ["_merge_notes", "_unmerge_notes"], feature="the optimizer (merges)"
            )
        return dict(optimizer)

    @property
    def optimizer_options(self) -> dict[str, Any] | None:
        """The optimizer's options in force now for this object's own calls (the settings, then
        the options given in code), or ``None`` when the optimizer is off. The django-q2 tasks
        and ``manage.py memory_optimize`` run with ``AGENT_MEMORY["OPTIMIZER"]`` alone."""
        return self._optimizer.options

    # --- running the optimizer --------------------------------------------------------------

    def after_turn(self, user: Any, model: str = "default") -> None:
        """Record the person's activity and, if a run is due, enqueue the optimizer (a queued
        run uses ``AGENT_MEMORY["OPTIMIZER"]``; a store other processes cannot see runs it here
        with this object's options); with the person's memory off, nothing (a temporary chat
        does not call it at all)."""
        if self._optimizer.options is None or not self.enabled(user):
            return
        self._optimizer.after_turn(user, model)

    def optimize(
        self, user: Any, model: str = "default", force: bool = False
    ) -> OptimizationResult:
        """Run the optimizer for this person now if due (always with ``force``); skipped while
        their memory is off."""
        if self._optimizer.options is not None and not self.enabled(user):
            return OptimizationResult(None, "skipped", reason="The person turned memory off.")
        return self._optimizer.optimize(user, model=model, force=force)

    def optimizer_state(self, user: Any) -> dict[str, Any]:
        """``{"consecutive_failures", "next_run_at", "last_success_at"}`` for the person."""
        return self._optimizer.state(user)

    # --- the person's merges ---------------------------------------------------------------

    @property
    def can_merge(self) -> bool:
        """Whether the store can merge (``store.can_merge``; the merge addresses answer 404
        otherwise)."""
        return self._optimizer.can_merge

    def merges(self, user: Any) -> list[RevertableMerge]:
        """The person's merge runs that can still be reverted, newest first."""
        return self._optimizer.merges(user)

    def has_merge(self, user: Any, run_id: int) -> bool:
        """Whether the person has the merge run ``run_id`` and it can still be reverted."""
        return self._optimizer.has_merge(user, run_id)

    def revert_merge(self, user: Any, run_id: Any, group: Any = None) -> list[Note]:
        """Revert one merge run, or only its group number ``group``: the originals come back
        with their ids, and the optimizer never merges them again. Returns the restored notes."""
        return self._optimizer.revert_merge(user, run_id, group)
