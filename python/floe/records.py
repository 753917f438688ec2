"""The engine's records as named numpy columns, without a copy.

An environment's ``info`` row (:attr:`floe.Engine.info`, one per environment; the ended episodes
of :attr:`floe.Levels.pending`) is 8 uint32 words in the order of :data:`floe.INFO_FIELDS`:
``episode_steps``, ``outcome`` (0 running, 1 success, 2 failure, 3 truncated), ``failure_kind``,
``failure_agent``, ``slot`` (the pool slot played), ``generation`` (the slot's refills when it
was played), ``episode_return`` (the return of every agent summed, float32 bits) and
``agents_on_goal``. A pool slot's row (:meth:`floe.Engine.levels`) is 8 uint32 words in the
order of :data:`floe.LEVEL_FIELDS`: ``slot``, ``generation``, ``width``, ``height``, ``agents``,
``holes``, ``optimal_soc`` (2**32 - 1 when unknown) and ``in_play`` (environments playing it).
"""

from __future__ import annotations

import numpy as np

from ._floe import INFO_FIELDS, LEVEL_FIELDS


def _rows(rows, fields: tuple, what: str) -> np.ndarray:
    a = np.asarray(rows)
    if a.dtype != np.uint32 or a.ndim == 0 or a.shape[-1] != len(fields):
        raise ValueError(f"{what} must be uint32 rows of {len(fields)} words ({', '.join(fields)}), "
                         f"not {a.dtype} of shape {a.shape}")
    return a


def info_columns(info) -> dict:
    """``info`` rows (``(..., 8)`` uint32) as a dict of their columns, named by
    :data:`floe.INFO_FIELDS`: views of the same memory, ``episode_return`` as float32 (the
    engine's own arrays stay current: the views show every later step)."""
    a = _rows(info, INFO_FIELDS, "info")
    returns = a.view(np.float32)
    return {name: (returns if name == "episode_return" else a)[..., i] for i, name in enumerate(INFO_FIELDS)}


def level_columns(levels) -> dict:
    """Pool slots' rows (``(n, 8)`` uint32, :meth:`floe.Engine.levels`) as a dict of their
    columns, named by :data:`floe.LEVEL_FIELDS` (views, no copy)."""
    a = _rows(levels, LEVEL_FIELDS, "levels")
    return {name: a[..., i] for i, name in enumerate(LEVEL_FIELDS)}
