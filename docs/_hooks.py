"""mkdocs hook: turn the docstrings' Sphinx roles into cross-references.

The docstrings are numpydoc and name other objects the Sphinx way
(``:func:`warpmatch.read_graph```, ``:class:`~warpmatch.graph.Graph```). mkdocstrings
renders those as the role's text followed by code; this hook, run on each page's
HTML, drops the role and wraps the code in an *optional* autorefs reference, so
that names the reference documents become links and the rest stay plain code
(an optional reference that does not resolve is not a ``--strict`` failure).
"""
from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj|const):"
                   r"<code>(~?)([\w.]+)(\(\))?</code>")


def _autoref(m: re.Match[str]) -> str:
    tilde, name, call = m.group(1), m.group(2), m.group(3) or ""
    shown = name.rsplit(".", 1)[-1] if tilde else name.lstrip(".")
    if name.startswith("."):      # relative to its module: nothing to resolve it against here
        return f"<code>{shown}{call}</code>"
    # a short name (``Graph.from_edges``) is tried as a member of the top-level package
    ident = name if name.split(".", 1)[0] == "warpmatch" else f"warpmatch.{name}"
    return f'<autoref identifier="{ident}" optional><code>{shown}{call}</code></autoref>'


def on_page_content(html: str, **kwargs: Any) -> str:
    """mkdocs event: rewrite the roles of one page (before autorefs resolves references)."""
    return _ROLE.sub(_autoref, html)
