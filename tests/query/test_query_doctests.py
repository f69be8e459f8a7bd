"""The examples in the query modules' docstrings run and hold."""
from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["warpmatch.query", "warpmatch.query.model", "warpmatch.query.dsl",
           "warpmatch.query.patterns", "warpmatch.query.io", "warpmatch.query.symmetry"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
