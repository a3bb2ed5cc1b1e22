"""Write the sample changefeed of docs/quickstart.md: one shop database, as each protocol puts it on Kafka.

Usage: python docs/samples/make.py

The changefeed is ``cdc_testing.changefeed.generate(seed=SEED, transactions=TRANSACTIONS)`` (customers, orders
and items; an ``ADD COLUMN`` half way). Each ``<protocol>.jsonl`` holds message lines (the ``cdc decode`` input)
with the coordinates a topic ``shop`` of three partitions gives them: the partition TiCDC's dispatcher chose (by
key for Debezium), offsets counted per partition. They carry no timestamp: the broker stamps each message as it
arrives (a fixed time in the past would be older than the topic's retention, and Kafka deletes such messages).
TiCDC Avro's messages name schema ids of one registry, so its sample is the changefeed's canonical events
(``events.jsonl``), which ``cdc encode`` turns into messages against any registry.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Final

from cdc_core import canonical
from cdc_core.message import Message
from cdc_core.messagelines import format_line
from cdc_core.registry import get_codec
from cdc_testing.changefeed import Changefeed, generate

SEED: Final = 11
TRANSACTIONS: Final = 24
TOPIC: Final = "shop"
PARTITIONS: Final = 3
HERE: Final = Path(__file__).parent
# what each protocol's producer is told: TiDB's extension carries the commit ts every protocol orders changes by
OPTIONS: Final[dict[str, dict[str, object]]] = {
    "debezium": {"enable-tidb-extension": True},
    "canal-json": {"enable-tidb-extension": True, "content-compatible": True},  # ENUM/SET members by name
    "simple": {},
}
# the codecs that choose a partition (TiCDC's dispatchers); Debezium's messages go by their key, as Kafka's own
# partitioner sends keyed messages
DISPATCHED: Final = frozenset({"canal-json", "simple"})


def changefeed() -> Changefeed:
    return generate(seed=SEED, transactions=TRANSACTIONS)


def placed(feed: Changefeed, protocol: str) -> list[Message]:
    """The protocol's messages with the coordinates the topic gives them."""
    options = {**OPTIONS[protocol], **({"partition-num": PARTITIONS} if protocol in DISPATCHED else {})}
    encoder = get_codec(protocol).encoder(options)
    offsets = dict.fromkeys(range(PARTITIONS), 0)
    out: list[Message] = []
    for event in feed.events:
        for message in encoder.encode(event):
            chosen = message.partition if protocol in DISPATCHED else zlib.crc32(message.key or b"")
            partition = (chosen or 0) % PARTITIONS
            out.append(
                Message(
                    value=message.value,
                    key=message.key,
                    topic=TOPIC,
                    partition=partition,
                    offset=offsets[partition],
                    headers=message.headers,
                )
            )
            offsets[partition] += 1
    return out


def main() -> int:
    feed = changefeed()
    for protocol in OPTIONS:
        lines = [format_line(m) for m in placed(feed, protocol)]
        (HERE / f"{protocol}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    events = [canonical.dumps(e, include_schema=True) for e in feed.events]
    (HERE / "events.jsonl").write_text("\n".join(events) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
