"""The fault-injecting proxy: an outage refuses connections, the proxy comes back on its port, and that port lies
below the ephemeral range, where no outgoing connection can take it meanwhile."""

from __future__ import annotations

import socket

from cdc_testing.faults import _ephemeral_low, proxied, reopenable_port


def test_a_reopenable_port_is_free_and_below_the_ports_outgoing_connections_take() -> None:
    low = _ephemeral_low()
    for _ in range(20):
        port = reopenable_port()
        assert 10_000 <= port < low
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", port))


def test_the_proxy_forwards_goes_down_and_comes_back_on_its_port() -> None:
    with socket.socket() as upstream:
        upstream.bind(("127.0.0.1", 0))
        upstream.listen(4)
        port = reopenable_port()
        with proxied(upstream.getsockname()[1], port) as proxy:
            for _ in range(2):
                with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
                    served, _ = upstream.accept()
                    with served:
                        client.sendall(b"ping")
                        assert served.recv(4) == b"ping"
                with proxy.outage():
                    try:
                        socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    except OSError:
                        pass  # refused while down
                    else:
                        raise AssertionError("the proxy accepted a connection during its outage")
            assert proxy.outages == 2
