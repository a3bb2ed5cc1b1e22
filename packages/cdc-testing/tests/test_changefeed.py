"""The generated changefeed: realistic content, encodable by a real codec, carried by the real broker."""

from __future__ import annotations

import collections

import attrs
import pytest

from cdc_core.events import DDLEvent, Op, RowChange
from cdc_core.registry import get_codec
from cdc_testing.changefeed import encode, generate
from cdc_testing.kafka import consume, create_topic, produce, unique_topic


def test_changefeed_mixes_tables_ops_and_a_ddl() -> None:
    feed = generate(seed=3, transactions=80)
    ops = collections.Counter((e.table, e.op) for e in feed.events if isinstance(e, RowChange))
    assert {t for t, _ in ops} == {"customers", "orders", "items"}
    assert all(ops[("customers", op)] > 0 for op in (Op.INSERT, Op.UPDATE, Op.DELETE))
    ddl = [e for e in feed.events if isinstance(e, DDLEvent)]
    assert len(ddl) == 1 and "loyalty" in feed.final_schemas["customers"].column_names
    commit_ts = [e.commit_ts for e in feed.events if e.commit_ts is not None]
    assert commit_ts == sorted(commit_ts)
    # the state is what replaying the row changes gives
    replayed: dict[tuple[str, tuple[object, ...]], dict[str, object]] = {}
    for event in feed.events:
        if isinstance(event, RowChange):
            keys = feed.final_schemas[event.table].handle_key
            key = (event.table, tuple(event.image[k] for k in keys))
            if event.op is Op.DELETE:
                del replayed[key]
            else:
                assert event.after is not None
                replayed[key] = event.after
    expected = {(t, k): r for t, rows in feed.state.items() for k, r in rows.items()}
    assert {k: {c: v for c, v in r.items() if v is not None} for k, r in replayed.items()} == {
        k: {c: v for c, v in r.items() if v is not None} for k, r in expected.items()
    }


def test_debezium_round_trip_of_the_changefeed() -> None:
    feed = generate(seed=5, transactions=30)
    decoder = get_codec("debezium").decoder({})
    decoded = [e for m in encode(feed, "debezium") for e in decoder.decode(m)]
    rows = [e for e in decoded if isinstance(e, RowChange)]
    assert [(e.table, e.op) for e in rows] == [(e.table, e.op) for e in feed.events if isinstance(e, RowChange)]


@pytest.mark.kafka
def test_messages_reach_the_broker_and_decode_to_the_changefeed(kafka_bootstrap: str) -> None:
    feed = generate(seed=2, transactions=20)
    topic = unique_topic("feed")
    create_topic(kafka_bootstrap, topic, 2)
    messages = [attrs.evolve(m, partition=(m.partition or 0) % 2) for m in encode(feed, "debezium")]
    sent = produce(kafka_bootstrap, topic, messages)
    received = consume(kafka_bootstrap, topic, sent)
    assert len(received) == sent == feed.row_changes + 1
    decoder = get_codec("debezium").decoder()
    rows = sorted(
        (e.commit_ts or 0, e.table, e.op.value) for m in received for e in decoder.decode(m) if isinstance(e, RowChange)
    )
    assert rows == sorted((e.commit_ts or 0, e.table, e.op.value) for e in feed.events if isinstance(e, RowChange))
