"""The query DSL: grammar, labels, direction, and every error with its caret."""
from __future__ import annotations

import pytest

from warpmatch.errors import QueryError
from warpmatch.query import ANY, Query, get_pattern, parse_query


def edge_set(q: Query) -> set[tuple[str, str, int]]:
    return {(q.names[u], q.names[w], lab)
            for (u, w), lab in zip(q.edges.tolist(), q.edge_labels.tolist())}


def test_chain_and_items() -> None:
    q = parse_query("a-b-c, c-a")
    assert (q.k, q.m, q.directed) == (3, 3, False)
    assert q.names == ("a", "b", "c")
    assert edge_set(q) == {("a", "b", ANY), ("b", "c", ANY), ("a", "c", ANY)}
    assert q.vertex_labels.tolist() == [ANY] * 3


def test_separators_whitespace_comments_and_empty_items() -> None:
    q = parse_query("  a - b ;b-c\n\n c - d , ,# a comment, a-z\n d-a,")
    assert q.names == ("a", "b", "c", "d")
    assert q.m == 4


def test_ids_follow_first_appearance_and_integer_names() -> None:
    q = parse_query("7-3, 3-0, 0-7")
    assert q.names == ("7", "3", "0")
    assert q.index_of("0") == 2
    assert parse_query("007-1").names == ("7", "1")


def test_single_vertex() -> None:
    q = parse_query("a:4")
    assert (q.k, q.m) == (1, 0)
    assert q.vertex_labels.tolist() == [4]


def test_vertex_labels_at_any_occurrence() -> None:
    q = parse_query("a-b:5, b-c, c:2-a:1, a:1-b")
    assert dict(zip(q.names, q.vertex_labels.tolist())) == {"a": 1, "b": 5, "c": 2}


def test_edge_labels() -> None:
    q = parse_query("a-[7]-b-c, c-[0]-a")
    assert edge_set(q) == {("a", "b", 7), ("b", "c", ANY), ("a", "c", 0)}
    assert q.edge_labeled


def test_directed_edges() -> None:
    q = parse_query("a->b, c<-b, a<-[4]-c, c-[2]->d")
    assert q.directed
    assert edge_set(q) == {("a", "b", ANY), ("b", "c", ANY), ("c", "a", 4), ("c", "d", 2)}
    # antiparallel directed edges are two edges
    assert parse_query("a->b, b->a").m == 2


def test_repeated_identical_edge_is_kept_once() -> None:
    assert parse_query("a-b, b-a, a-b-a").m == 1


@pytest.mark.parametrize("name", ["triangle", "house", "bowtie", "5-clique", "6-star"])
def test_to_dsl_round_trip(name: str) -> None:
    q = get_pattern(name)
    r = parse_query(q.to_dsl())
    assert r.names == q.names
    assert edge_set(r) == edge_set(q)


def test_to_dsl_round_trip_labels_and_direction() -> None:
    q = parse_query("x:1-[3]->y:2, y->z, z-[0]->x")
    r = parse_query(q.to_dsl())
    assert edge_set(r) == edge_set(q)
    assert r.vertex_labels.tolist() == q.vertex_labels.tolist()
    assert r.directed


def test_name_is_kept() -> None:
    assert parse_query("a-b", name="edge").name == "edge"


ERRORS = [
    # text, a fragment of the message, the caret column (1-based)
    ("a-b, b->c", "cannot mix directed", 7),
    ("a->b, b-c", "the first edge, column 2, is directed", 8),
    ("a-", "the edge has no vertex after it", 3),
    ("a-b,", None, None),                      # fine: trailing separator
    ("a-,b", "the edge has no vertex after it", 3),
    ("a:1-b, a:2", "vertex 'a' is given label 2 here but label 1 earlier (column 3)", 10),
    ("a-[1]-b, b-a", "edge b-a is given no label here but label 1 earlier", 11),
    ("a-[1]-b, a-[2]-b", "edge a-b is given label 2 here but label 1", 11),
    ("a-a", "self-loop on vertex 'a'", 2),
    ("a<->b", "cannot point both ways", 2),
    ("a<-[3]->b", "cannot point both ways", 2),
    ("a-[x]-b", "expected an edge label inside '[...]'", 4),
    ("a-[-1]-b", "must be a non-negative integer", 4),
    ("a-[1", "expected ']' to close the edge label", 5),
    ("a-[1]b", "expected '-' or '->' after the edge label", 6),
    ("a:", "expected a label for vertex 'a'", 3),
    ("a:x-b", "expected a label for vertex 'a'", 3),
    ("a:-1-b", "must be a non-negative integer", 3),
    ("1a-b", "cannot start with a digit", 2),
    ("a b", "expected ',', ';', a newline or an edge", 3),
    ("a-b)", "expected ',', ';', a newline or an edge", 4),
    ("--", "expected a vertex name, found '-'", 1),
    ("a-->b", "expected a vertex name, found '-'", 3),
    ("a-b, -c", "expected a vertex name", 6),
    ("a-b, ?", "expected a vertex name, found '?'", 6),
    # labels are int32: a larger one is an error at its column, not an OverflowError
    ("a:99999999999-b", "a label for vertex 'a' after ':' is too large (99999999999", 3),
    ("a-[2147483648]-b", "an edge label inside '[...]' is too large (2147483648", 4),
    ("a:2147483647-b", None, None),            # fine: the largest int32 label
]


@pytest.mark.parametrize("text,fragment,col", ERRORS)
def test_errors_show_text_and_caret(text: str, fragment: str | None, col: int | None) -> None:
    if fragment is None:
        parse_query(text)
        return
    with pytest.raises(QueryError) as ei:
        parse_query(text)
    msg = str(ei.value)
    assert fragment in msg
    first, shown, caret = msg.split("\n")
    assert first.endswith(f"at column {col}:")
    assert shown == "  " + text
    assert caret == "  " + " " * (col - 1) + "^"


def test_error_on_a_later_line_names_line_and_column() -> None:
    with pytest.raises(QueryError) as ei:
        parse_query("a-b\nb-c\nc-:1")
    msg = str(ei.value)
    assert "at line 3, column 3:" in msg
    assert msg.endswith("\n  c-:1\n    ^")


def test_tab_keeps_caret_aligned() -> None:
    with pytest.raises(QueryError) as ei:
        parse_query("a\t-\t?")
    assert str(ei.value).endswith("\n  a - ?\n      ^")


def test_empty_and_disconnected() -> None:
    for text in ("", "   ", ",;\n", "# only a comment"):
        with pytest.raises(QueryError, match="empty"):
            parse_query(text)
    with pytest.raises(QueryError,
                       match=r"disconnected: it has 2 components \(\{a, b\}; \{c, d\}\)"):
        parse_query("a-b, c-d")


def test_non_string_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        parse_query(["a-b"])  # type: ignore[arg-type]


def test_query_parse_classmethod_uses_the_dsl() -> None:
    assert Query.parse("a-b-c").m == 2
