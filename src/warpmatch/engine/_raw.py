"""Raw loads for numba kernels: read an int32/int64/uint64 at an address plus an index
(and :func:`st32`, the one raw store: an int32 written the same way).

A kernel that reads twenty arrays pays for them in every call it makes: numba
passes each array as a seven-field struct and reference-counts it, and cannot
inline a function of 30 or more arguments (measured on the continuous engine:
0.1-0.5 µs a call, and minutes of compilation for the inlined copies). The
continuous engine's kernels therefore take one int64 *address table* of the
arrays they read (their data pointers, filled by the Python caller, which keeps
the arrays alive for the call) and read them with these loads, which compile to
one instruction each. Like numba's own array indexing (without
``boundscheck``), the loads do not check bounds: the tables' producers
guarantee them.

Examples
--------
>>> import numpy as np
>>> from numba import njit
>>> a = np.array([3, 5, 7], dtype=np.int32)
>>> @njit
... def second(addr):
...     return ld32(addr, 1)
>>> int(second(a.ctypes.data))
5
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = ["ld32", "ld64", "ldu64", "st32", "prefetch", "call_i64x4"]


def _loader(bits: int, result: types.Integer, signed: bool):
    def gen(typingctx, addr, idx):
        if not isinstance(addr, types.Integer) or not isinstance(idx, types.Integer):
            return None
        sig = result(types.int64, types.int64)

        def codegen(context, builder, signature, args):
            a, i = args
            a = context.cast(builder, a, signature.args[0], types.int64)
            i = context.cast(builder, i, signature.args[1], types.int64)
            off = builder.mul(i, ir.Constant(ir.IntType(64), bits // 8))
            ptr = builder.inttoptr(builder.add(a, off), ir.PointerType(ir.IntType(bits)))
            val = builder.load(ptr)
            if bits < 64:
                val = builder.sext(val, ir.IntType(64)) if signed else \
                    builder.zext(val, ir.IntType(64))
            return val
        return sig, codegen
    return gen


#: ``int32`` at ``addr + 4 * i``, as int64
ld32 = intrinsic(_loader(32, types.int64, True))
#: ``int64`` at ``addr + 8 * i``
ld64 = intrinsic(_loader(64, types.int64, True))
#: ``uint64`` at ``addr + 8 * i``
ldu64 = intrinsic(_loader(64, types.uint64, False))


@intrinsic
def st32(typingctx, addr, idx, val):  # pragma: no cover - compiled
    """Write ``val`` (truncated to int32) at ``addr + 4 * idx``; no bounds check.

    For generated code that keeps scratch of its own in a block the caller owns
    (the compiled delta plans' row tags, :mod:`warpmatch.stream._seq_special`)."""
    if not all(isinstance(x, types.Integer) for x in (addr, idx, val)):
        return None
    sig = types.void(types.int64, types.int64, types.int64)

    def codegen(context, builder, signature, args):
        a, i, v = (context.cast(builder, x, t, types.int64)
                   for x, t in zip(args, signature.args))
        off = builder.mul(i, ir.Constant(ir.IntType(64), 4))
        ptr = builder.inttoptr(builder.add(a, off), ir.PointerType(ir.IntType(32)))
        builder.store(builder.trunc(v, ir.IntType(32)), ptr)
        return context.get_dummy_value()
    return sig, codegen


@intrinsic
def prefetch(typingctx, arr, idx):  # pragma: no cover - compiled
    """Hint the CPU to bring ``arr[idx]`` into the cache (LLVM's ``llvm.prefetch``, a read
    kept in every cache level); no effect on the program's values, no bounds check.

    For loops whose next iterations' loads are known ahead and miss the cache (the
    sequential path's hash-table probes, one per update)."""
    if not isinstance(arr, types.Array) or not isinstance(idx, types.Integer):
        return None
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        from numba.core import cgutils
        aty = signature.args[0]
        a, i = args
        ary = context.make_array(aty)(context, builder, a)
        i = context.cast(builder, i, signature.args[1], types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aty, ary, [i])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        # llvmlite does not know this intrinsic's type; LLVM names it by its pointer type
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3),
                          ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return sig, codegen


@intrinsic
def call_i64x4(typingctx, fn, a, b, c, d):  # pragma: no cover - compiled
    """Call the C function at address ``fn`` as ``int64 fn(int64, int64, int64, int64)``.

    For kernels that run code compiled after them (a ``numba.cfunc`` generated
    for one query, :mod:`warpmatch.stream._seq_special`): the caller is
    compiled and cached once, and the callee's address arrives as an integer,
    so no dispatcher object becomes part of the caller's type signature (which
    would recompile it for every callee and keep it out of numba's disk cache).
    One indirect call, a few ns."""
    args = (fn, a, b, c, d)
    if not all(isinstance(x, types.Integer) for x in args):
        return None
    sig = types.int64(types.int64, types.int64, types.int64, types.int64, types.int64)

    def codegen(context, builder, signature, llargs):
        i64 = ir.IntType(64)
        vals = [context.cast(builder, v, t, types.int64)
                for v, t in zip(llargs, signature.args)]
        fnty = ir.FunctionType(i64, [i64] * 4)
        ptr = builder.inttoptr(vals[0], fnty.as_pointer())
        return builder.call(ptr, vals[1:])
    return sig, codegen
