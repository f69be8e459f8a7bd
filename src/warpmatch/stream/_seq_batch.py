"""A batch on the sequential CPU path: its ids and checks, and what a run did with it.

Map: :func:`map_updates` (external ids -> internal, the batch's stateless checks, one
numba pass; :func:`_lookup` in the id maps' sorted arrays) and :class:`SeqResult` (one
:meth:`~warpmatch.stream.sequential.SequentialPath.run`'s counts, validation codes and
undo record). Kept apart from :mod:`warpmatch.stream.sequential`, which drives the
kernels of :mod:`warpmatch.stream._seq_kernels` with them.

What differs from RapidFlow (Sun et al., VLDB 2022), which reads a stream of internal
ids and trusts it:

- External ids are mapped per batch (identity maps need no lookup), and a malformed
  op or label, an unknown vertex or a label without edge labels in the graph sends the
  batch to the batch path, which reports it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..engine._cpu_kernels import _lower_bound
from ._checks import skip_reason
from .types import Updates

__all__ = ["SeqResult", "map_updates", "part_net"]


@njit(cache=True, nogil=True, inline="always")
def _lookup(keys, vals, x):
    """``vals[i]`` where ``keys[i] == x`` in the sorted ``keys``, else -1."""
    i = _lower_bound(keys, 0, keys.shape[0], x)
    return vals[i] if i < keys.shape[0] and keys[i] == x else -1


@njit(cache=True, nogil=True)
def map_updates(src, dst, op, lab, has_lab, labels_ok, identity, n, base_ext, base_int,
                extra_ext, extra_int, out_a, out_b, out_op, out_lab):
    """Internal ids, ops and labels of a batch; False if an update needs the batch path.

    The batch path handles (and reports) what this one does not: an unknown
    or negative vertex id (a new vertex), an op other than +1/-1, a negative
    label, one above int32, or a nonzero label where the graph has none
    (``labels_ok`` False).
    """
    for i in range(src.shape[0]):
        o = op[i]
        if o != 1 and o != -1:
            return False
        if has_lab:
            x = lab[i]
            if x < 0 or x > 2147483647 or (x != 0 and not labels_ok):
                return False
            out_lab[i] = x
        else:
            out_lab[i] = 0
        out_op[i] = o
        for side in range(2):
            e = src[i] if side == 0 else dst[i]
            if identity:
                v = e if 0 <= e < n else -1
            else:
                v = _lookup(base_ext, base_int, e)
                if v < 0:
                    v = _lookup(extra_ext, extra_int, e)
            if v < 0:
                return False
            if side == 0:
                out_a[i] = v
            else:
                out_b[i] = v
    return True


@dataclass
class SeqResult:
    """What :meth:`SequentialPath.run <warpmatch.stream.sequential.SequentialPath.run>`
    did with a batch (``SequentialPath`` below: that class).

    Attributes
    ----------
    done : int
        Updates handled (``0..done-1``); the caller gives the rest, if any, to
        the batch path.
    plus, minus : numpy.ndarray
        int64 per-update counts of the whole batch (zero past ``done``).
    code : numpy.ndarray
        int8 validation code per update (0 valid; past ``done`` meaningless).
    tasks : int
        Delta searches run.
    undo_state : tuple
        What ``SequentialPath.undo`` needs to take the batch back.

        ``code`` and the arrays of ``undo_state`` are views of the path's kept
        batch arrays: valid until its next ``run`` (``SequentialPath.detach``
        copies them).
    valid : int
        Valid updates among ``0..done-1``.
    added, removed : int
        ``plus.sum()`` and ``minus.sum()``.
    counted : bool
        Whether the path's ``stats`` count these updates (``False`` for
        ``SequentialPath.dry_run``'s record of a slice the batch path applied).
    """

    done: int
    plus: np.ndarray
    minus: np.ndarray
    code: np.ndarray
    tasks: int
    undo_state: tuple = ()
    valid: int = -1
    added: int = 0
    removed: int = 0
    counted: bool = True

    def reasons(self, ups: Updates, lo: int = 0) -> list[str]:
        """The batch path's skip messages for the invalid updates among ``0..done-1``;
        with ``lo``, of the updates ``lo..lo+len(ups)-1``, the batch ``ups`` (a fused
        run's batch, :mod:`warpmatch.stream._fused`)."""
        out = [""] * len(ups)
        if self.valid == self.done:     # (the common case: no scan of the codes)
            return out
        code = self.code[lo:min(lo + len(ups), self.done)]
        for i in np.flatnonzero(code).tolist():
            out[i] = skip_reason(int(code[i]), ups, i)
        return out


def part_net(a: np.ndarray, b: np.ndarray, op: np.ndarray, code: np.ndarray,
             lab_idx: np.ndarray, table: np.ndarray, trust: bool, same: bool
             ) -> tuple[int, int]:
    """The net edge change of some updates of a run, of the whole graph and of the
    relevant subgraph, as :func:`~warpmatch.stream._seq_kernels.seq_run` counts it
    (``ctl[C_NET]``, ``ctl[C_RNET]``): every valid update (with ``trust``, only the
    relevant ones by ``table``: the others change nothing), and the relevant ones
    (every one when ``same``)."""
    valid = code == 0
    la = lab_idx[a]
    lb = lab_idx[b]
    ok = (la >= 0) & (lb >= 0)
    rel = np.zeros(a.shape[0], dtype=bool)
    rel[ok] = table[la[ok], lb[ok]]
    sgn = op.astype(np.int64)
    net = int(sgn[valid & rel].sum() if trust else sgn[valid].sum())
    rnet = int(sgn[valid].sum() if same else sgn[valid & rel].sum())
    return net, rnet
