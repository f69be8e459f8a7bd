"""Query graphs: the model, the text DSL, named patterns, query files, and symmetry.

>>> from warpmatch.query import parse_query, symmetry_breaking
>>> symmetry_breaking(parse_query("a-b, b-c, c-a"))[1]
6
"""
from __future__ import annotations

from .dsl import parse_query
from .io import check_direction, read_query_file, resolve_query
from .model import ANY, MAX_QUERY_VERTICES, Query
from .patterns import get_pattern, list_patterns, read_pattern_collection
from .symmetry import automorphism_count, automorphisms, orbits, symmetry_breaking

__all__ = [
    "Query", "ANY", "MAX_QUERY_VERTICES",
    "parse_query", "get_pattern", "list_patterns", "read_pattern_collection",
    "read_query_file", "resolve_query", "check_direction",
    "symmetry_breaking", "automorphism_count", "automorphisms", "orbits",
]
