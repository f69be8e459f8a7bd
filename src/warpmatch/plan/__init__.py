"""Planning: candidate filtering, matching order, the Plan, and its explanation.

:func:`build_plan` turns a query and a data graph into a :class:`Plan`, the
flat-array contract every engine executes; :func:`explain_plan` describes it.
Matching orders are pluggable (:func:`register_order`, :func:`get_order`).
"""
from __future__ import annotations

from .build import build_plan
from .explain import explain_plan
from .filter import candidate_counts, candidates
from .order import ORDER_NAMES, get_order, register_order
from .plan import Plan

__all__ = ["Plan", "build_plan", "explain_plan", "get_order", "register_order",
           "ORDER_NAMES", "candidates", "candidate_counts"]
