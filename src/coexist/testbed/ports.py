"""The ports of a run's flows: each flow's iperf3 server port and fixed client port, which
flow a socket's ports belong to, and the check that no other connection in the sender
namespaces can take a flow's client port."""

from __future__ import annotations

from .topology import Plan, TestbedError, sh

BASE_PORT = 5201
#: Client ports of the data connections: below Linux's default ephemeral range (32768-60999),
#: so no other connection (iperf3's control connections run the namespace's default CCA) can
#: hold a flow's port; :func:`_check_client_ports` checks the range in the run's namespaces.
BASE_CPORT = 20001


def flow_of_socket(n_flows: int) -> dict[tuple[int, int], int]:
    """(client port, server port) of each flow's data connection -> flow index. Both ports
    are matched: an ``ss`` line with a flow's client port but another peer is not its data
    (a control connection that got the port would otherwise be read as the flow)."""
    return {(BASE_CPORT + i, BASE_PORT + i): i for i in range(n_flows)}


def _check_client_ports(plan: Plan, n_flows: int) -> None:
    """Refuse to run when a sender namespace's ephemeral port range holds a flow's client
    port: another connection could take it before the flow binds it."""
    ports = range(BASE_CPORT, BASE_CPORT + n_flows)
    for ns in plan.senders:
        lo, hi = map(int, sh(["nsenter", f"--net=/run/netns/{ns}", "cat",
                              "/proc/sys/net/ipv4/ip_local_port_range"]).split())
        if lo <= ports[-1] and ports[0] <= hi:
            raise TestbedError(f"{ns}: net.ipv4.ip_local_port_range {lo}-{hi} overlaps the "
                               f"flows' client ports {ports[0]}-{ports[-1]}")
