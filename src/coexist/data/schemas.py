"""The bundled tables' schemas: every column of every table kind (a campaign table and a
run's flows, goodput series, socket, queue and probe samples), with its type, unit, range and
vocabulary, and the file each per-run table is stored in. The loaders check rows against
them (:mod:`.tables`), and the datapackage describes the files by them (:mod:`.datapackage`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.params import ParameterError

#: the bottleneck utilisation a run may report: the counters behind it are read apart from
#: their time stamps by up to tens of ms under steal, which over the shortest span a
#: utilisation is computed on (1 s, :data:`coexist.testbed.spec.MIN_UTILISATION_SPAN_S`)
#: moves the ratio by a few %; the stored runs reach 1.069 (T-F1 draws them)
UTILISATION_MAX = 1.10
#: the congestion controls a stored flow can have (:data:`coexist.testbed.spec.KNOWN_CCAS`)
CCAS = ("cubic", "bbr", "reno")


@dataclass(frozen=True)
class Field:
    name: str
    type: str          # "integer", "number", "string", "boolean"
    unit: str = ""
    description: str = ""
    nullable: bool = False
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None
    """the vocabulary of a text column (None: any text without control characters)"""


def _f(name, type_, unit="", description="", nullable=False, minimum=None, maximum=None,
       choices=None) -> Field:
    return Field(name, type_, unit, description, nullable, minimum, maximum, choices)


#: the qdiscs the harness reads counters of (the bottleneck's is a bfifo)
QDISCS = ("bfifo", "pfifo", "tbf", "htb")
#: what may load the machine during a run (:data:`coexist.testbed.load.KINDS`)
LOADS = ("none", "cpu", "book", "experiment")


RUN_COLUMNS = [
    _f("campaign", "string", description="campaign name"),
    _f("key", "string", description="run key: parameters and repeat"),
    _f("run_id", "string", description="random id of the run; with campaign it names one run "
       "(early runs have 6 hex digits, and two campaigns share one of those)"),
    _f("repeat", "integer", minimum=0),
    _f("capacity_bps", "number", "bit/s", "bottleneck rate", minimum=0),
    _f("rtt_s", "number", "s", "reference base RTT (BDP and default flow RTT)", minimum=0),
    _f("buffer_bdp", "number", "BDP", "bottleneck buffer in multiples of C x RTT", minimum=0),
    _f("buffer_bytes", "integer", "byte", minimum=0),
    _f("flows_spec", "string", description="flow mix, CCA:COUNT[@RTT],..."),
    _f("load", "string", description="deliberate background load during the run "
       "(none, cpu, book, experiment)", choices=LOADS),
    _f("n_flows", "integer", minimum=1),
    _f("n_bbr", "integer", minimum=0),
    _f("duration_s", "number", "s", minimum=0),
    _f("warmup_s", "number", "s", minimum=0),
    _f("utilisation", "number", "1", "bottleneck link utilisation after warm-up", minimum=0,
       maximum=UTILISATION_MAX),
    _f("jain_index", "number", "1", "Jain fairness of per-flow goodput", minimum=0,
       maximum=1),
    _f("bbr_share", "number", "1", "BBR flows' share of total goodput", nullable=True,
       minimum=0, maximum=1),
    _f("mean_queue_delay_s", "number", "s", "mean bottleneck queueing delay", minimum=0),
    _f("bottleneck_drops", "integer", "packet", minimum=0),
]
FLOW_COLUMNS = [
    _f("flow", "integer", description="flow index in the run", minimum=0),
    _f("cca", "string", description="congestion control (cubic, bbr, reno)", choices=CCAS),
    _f("flow_rtt_s", "number", "s", "this flow's base RTT", minimum=0),
    _f("goodput_bps", "number", "bit/s", "receiver goodput after warm-up", minimum=0),
    _f("share", "number", "1", "share of the run's total goodput", minimum=0, maximum=1),
    _f("retransmits", "integer", "packet", minimum=0),
]
SCHEMAS: dict[str, list[Field]] = {
    "campaign": RUN_COLUMNS + FLOW_COLUMNS,
    "flows": [
        _f("flow", "integer", minimum=0), _f("cca", "string", choices=CCAS),
        _f("rtt_s", "number", "s", minimum=0), _f("group", "integer", minimum=0),
        _f("start_offset_s", "number", "s", "client start after the first client", minimum=0),
        _f("goodput_bps", "number", "bit/s", minimum=0),
        _f("bytes_received", "integer", "byte", minimum=0),
        _f("retransmits", "integer", "packet", minimum=0),
        _f("iperf3_congestion", "string", choices=CCAS),
        _f("share", "number", "1", minimum=0, maximum=1),
    ],
    "series": [
        _f("flow", "integer", minimum=0), _f("cca", "string", choices=CCAS),
        _f("rtt_s", "number", "s", minimum=0),
        _f("t_start_s", "number", "s", "interval start on the run clock", minimum=0),
        _f("t_end_s", "number", "s", minimum=0), _f("bytes", "integer", "byte", minimum=0),
        _f("goodput_bps", "number", "bit/s", "receiver goodput in the interval", minimum=0),
    ],
    "sockets": [
        _f("t_s", "number", "s", "sample time on the run clock", minimum=0),
        _f("flow", "integer", minimum=0), _f("cca_requested", "string", choices=CCAS),
        _f("local_port", "integer", minimum=0, maximum=65_535),
        _f("cca", "string", nullable=True, choices=CCAS),
        _f("cwnd", "integer", "packet", nullable=True, minimum=0),
        _f("srtt_s", "number", "s", nullable=True, minimum=0),
        _f("minrtt_s", "number", "s", nullable=True, minimum=0),
        _f("bytes_acked", "integer", "byte", nullable=True, minimum=0),
        _f("bytes_retrans", "integer", "byte", minimum=0),
        _f("delivery_rate_bps", "number", "bit/s", nullable=True, minimum=0),
        _f("pacing_rate_bps", "number", "bit/s", nullable=True, minimum=0),
        _f("bbr_bw_bps", "number", "bit/s", "BBR's max-filtered bandwidth", nullable=True),
        _f("bbr_mrtt_s", "number", "s", "BBR's min RTT estimate", nullable=True),
        _f("pacing_gain", "number", "1", nullable=True),
        _f("cwnd_gain", "number", "1", nullable=True),
        _f("acked_rate_bps", "number", "bit/s", "bytes_acked difference over the sample step",
           nullable=True),
    ],
    "queue": [
        _f("t_s", "number", "s", minimum=0), _f("kind", "string", choices=QDISCS),
        _f("sent_bytes", "integer", "byte", minimum=0),
        _f("sent_packets", "integer", "packet", minimum=0),
        _f("drops", "integer", "packet", minimum=0),
        _f("backlog_bytes", "integer", "byte", minimum=0),
        _f("backlog_packets", "integer", "packet", minimum=0),
    ],
    "probe": [
        _f("t_s", "number", "s", "reply time on the run clock"), _f("group", "integer", minimum=0),
        _f("rtt_configured_s", "number", "s", minimum=0), _f("seq", "integer", minimum=0),
        _f("rtt_s", "number", "s", "probe round trip through the delay path", minimum=0),
    ],
}
#: file name of each per-run table (time series compressed: they are most of the bytes)
RUN_FILES = {"flows": "flows.csv", "series": "series.csv.gz", "sockets": "sockets.csv.gz",
             "queue": "queue.csv.gz", "probe": "probe.csv.gz"}


def schema_fields(schema: str) -> list[Field]:
    """The columns of the table kind ``schema``; an unknown kind is refused naming the
    kinds there are."""
    if schema not in SCHEMAS:
        raise ParameterError(f"parameter 'schema' = {schema!r} is invalid; valid: one of "
                             f"{', '.join(repr(s) for s in SCHEMAS)}")
    return SCHEMAS[schema]
