"""The collector stage (``warpmatch.stream.collector``): order, back-pressure, errors."""
from __future__ import annotations

import threading

import pytest

from warpmatch.stream.collector import Collector


def test_writes_happen_in_order_on_another_thread():
    seen, threads = [], set()

    def write(i, tag):
        seen.append((i, tag))
        threads.add(threading.get_ident())

    with Collector(write) as c:
        for i in range(50):
            c.put(i, f"b{i}")
    assert seen == [(i, f"b{i}") for i in range(50)]
    assert threads and threading.get_ident() not in threads


@pytest.mark.parametrize("pending", [1, 3])
def test_put_waits_while_pending_writes_are_unwritten(pending):
    """Back-pressure: while the writer is held, the main thread hands over ``pending``
    results and then waits, so the unwritten results it has handed over (the one being
    written included) never pass that bound."""
    gate = threading.Event()
    handed = []
    most = []

    def write(i):
        gate.wait()
        most.append(len(handed) - i)

    c = Collector(write, pending=pending)
    released = threading.Timer(0.2, gate.set)
    released.start()
    for i in range(10):
        c.put(i)
        handed.append(i)                  # put returned: handed over
    c.close()
    released.cancel()
    assert len(most) == 10
    assert max(most) <= pending


def test_a_write_error_is_raised_by_the_next_put_and_later_writes_are_skipped():
    done = []
    failed = threading.Event()

    def write(i):
        if i == 2:
            failed.set()
            raise OSError("disk full")
        done.append(i)

    c = Collector(write, pending=1)
    with pytest.raises(OSError, match="disk full"):
        for i in range(10):
            c.put(i)
    c.close()
    assert done == [0, 1]                 # nothing after the failed batch: no gap
    assert failed.is_set()


def test_close_raises_the_last_write_error():
    def write(i):
        raise ValueError(f"bad {i}")

    c = Collector(write)
    c.put(0)
    with pytest.raises(ValueError, match="bad 0"):
        c.close()
    with pytest.raises(RuntimeError, match="closed"):
        c.put(1)


def test_an_error_of_the_body_finishes_the_writes_handed_over():
    done = []
    with pytest.raises(KeyError):
        with Collector(done.append, pending=4) as c:
            for i in range(4):
                c.put(i)
            raise KeyError("the matcher failed")
    assert done == [0, 1, 2, 3]


def test_pending_must_not_be_negative():
    with pytest.raises(ValueError, match="pending"):
        Collector(print, pending=-1)


def test_no_pending_writes_on_the_calling_thread():
    threads = []
    c = Collector(lambda i: threads.append(threading.get_ident()), pending=0)
    c.put(0)
    assert threads == [threading.get_ident()]        # written before put returned
    c.close()
    with pytest.raises(RuntimeError, match="closed"):
        c.put(1)
