"""Borrowed array views for numba kernels: no reference counting in hot calls.

numba passes an array to a function it does not inline as a struct with a
pointer to its *meminfo*, and increments and decrements that counter
atomically around the call. A search that calls a helper per candidate with
twenty arrays (the continuous engine's batch view) spends most of its time
there: about 250 ns per call, against 10 ns with the counters gone
(``bench``-style measurement on email-Eu-core, triangle deltas, 2-core CPU).

:func:`borrow` returns the same array (data, shape, strides) with a null
meminfo and parent: numba skips the counting for it. The view owns nothing,
so it must not outlive the array it was made from: kernels borrow their
*arguments* (alive for the whole call, held by the Python caller), never an
array they allocate themselves.

Examples
--------
>>> import numpy as np
>>> from numba import njit
>>> @njit
... def total(a):
...     b = borrow(a)
...     return b.sum()
>>> int(total(np.arange(4)))
6
"""
from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["borrow"]


@intrinsic
def borrow(typingctx, arr):  # pragma: no cover - compiled
    """A view of ``arr`` without a meminfo (module docstring)."""
    if not isinstance(arr, types.Array):
        return None
    sig = arr(arr)

    def codegen(context, builder, signature, args):
        src = context.make_array(signature.args[0])(context, builder, args[0])
        out = context.make_array(signature.return_type)(context, builder)
        for name in ("data", "shape", "strides", "itemsize", "nitems"):
            setattr(out, name, getattr(src, name))
        out.meminfo = cgutils.get_null_value(out.meminfo.type)
        out.parent = cgutils.get_null_value(out.parent.type)
        return out._getvalue()

    return sig, codegen
