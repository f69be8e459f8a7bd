"""Helpers shared by the CLI tests (imported as ``cli_helpers``, like ``graph_helpers``)."""
from __future__ import annotations

import json

from click.testing import Result


def last_json(res: Result) -> dict:
    """The JSON object on the last stdout line of a successful run."""
    assert res.exit_code == 0, (res.stdout, res.stderr)
    lines = res.stdout.strip().splitlines()
    assert lines, res.stdout
    return json.loads(lines[-1])


def assert_clean_error(res: Result, *needles: str, code: int | None = None) -> None:
    """Non-zero exit, one error line on stderr (besides warnings), no traceback, needles in it."""
    assert res.exit_code != 0, res.stdout
    if code is not None:
        assert res.exit_code == code
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout
    lines = [ln for ln in res.stderr.strip().splitlines()
             if not ln.startswith("warpmatch: warning:")]
    assert len(lines) == 1 and ": error: " in lines[0], res.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
