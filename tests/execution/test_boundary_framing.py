"""The boundary's frames: a message is read whole up to MAX_MESSAGE, and a header that
claims more is refused before anything is read."""

from __future__ import annotations

import socket
import threading

import pytest

from curator.execution import boundary


def test_a_message_of_600_mb_crosses_and_one_over_the_bound_is_refused():
    """GPflow's Monte Carlo likelihood tests give their callback 672 MB of samples: a
    message that large is read whole; one whose header claims more than MAX_MESSAGE is
    refused before anything is read."""
    judge, solution = socket.socketpair()
    try:
        payload = b"\x07" * (600 << 20)
        sender = threading.Thread(target=boundary.send_frame, args=(solution, b"R", payload))
        sender.start()
        kind, got = boundary.recv_frame(judge)
        sender.join()
        assert kind == b"R" and len(got) == len(payload) and got[-1:] == b"\x07"
        del payload, got
        solution.sendall(boundary.HEADER.pack(b"R", boundary.MAX_MESSAGE + 1))
        with pytest.raises(boundary.NotData, match="a message of"):
            boundary.recv_frame(judge)
    finally:
        judge.close()
        solution.close()
