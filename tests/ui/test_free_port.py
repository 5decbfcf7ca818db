"""`pipeline-kit notebooks` and `monitor` with no --port: 8866, or the next free port when a
server (another user's, a second copy, a test beside it) holds it."""

from __future__ import annotations

import socket

from pipeline_kit.ui.serve import HOST, free_port


def test_a_port_held_by_a_server_is_passed_over() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind((HOST, 0))
        held.listen()
        taken = held.getsockname()[1]
        chosen = free_port(taken)
        assert chosen != taken and taken < chosen < taken + 50
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind((HOST, chosen))  # it really is free
