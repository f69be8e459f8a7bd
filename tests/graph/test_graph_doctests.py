"""The examples in the graph modules' docstrings run and hold."""
from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["warpmatch.graph.csr", "warpmatch.graph.formats", "warpmatch.graph.binary",
           "warpmatch.graph.convert", "warpmatch.graph.generators"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
