"""The job end to end: recorded Kafka messages -> decode -> apply -> tables equal to the source state, read back
without Spark (``deltalake`` for Delta Lake, ``pyiceberg`` for Iceberg).

Messages go through Spark's own file stream source (one file per micro-batch) so batch boundaries are fixed,
with at-least-once replays and partitions interleaved. Faults are injected by failing the job after a table's
commit (mid-batch) and after every table's commit but before Spark records the batch's offsets.

``CDC_TEST_SPARK_MASTER=local-cluster[2,1,1024]`` runs these tests on two executor JVMs (``test_cluster.py``).
"""

from __future__ import annotations

import os
import random
import zlib
from pathlib import Path
from typing import Any

import attrs
import pytest

from cdc_core.events import DDLEvent, DDLType, Op, RowChange, Watermark
from cdc_core.registry import get_codec, installed_codecs
from cdc_spark import expression_mode
from cdc_spark import job as job_module
from cdc_spark.demo import differences
from cdc_spark.expression_mode import FACTORY_MODE
from cdc_spark.job import KAFKA_SCHEMA, SMALL_BATCH, BatchReport, JobConfig, SourceSpec, make_sink, run
from cdc_spark.sinks import scd1_batch
from cdc_testing.changefeed import Changefeed, encode, generate
from cdc_testing.faults import InjectedFault, KillingSink

pytest.importorskip("cdc_debezium")
pytestmark = pytest.mark.spark

PARTITIONS = 3


def record(
    spark: Any,
    feed: Changefeed,
    folder: Path,
    files: int,
    seed: int,
    protocol: str = "debezium",
    options: dict[str, object] | None = None,
) -> int:
    """Write the changefeed as Kafka-shaped rows, ``files`` parquet files, with replays; returns messages.

    Keyed messages go to the partition of their key's hash, key-less ones (Canal-JSON, Simple) to the encoder's
    table dispatch, as TiCDC's producers route them. Replays are random earlier messages landing late, except
    for Avro: its tombstone deletes carry no commit ts, so a lone late copy of one cannot be told from a new
    delete by anyone. There the replays are what TiCDC sends after a restart, each partition's tail again.
    """
    rng = random.Random(seed)
    logs: dict[int, list[Any]] = {p: [] for p in range(PARTITIONS)}
    encoder_options = {"enable-tidb-extension": True} if options is None else options
    dispatch = {} if protocol == "debezium" else {"partition-num": PARTITIONS}  # Debezium messages are keyed
    for message in encode(feed, protocol, {**dispatch, **encoder_options}):
        partition = zlib.crc32(message.key) if message.key else (message.partition or 0)
        logs[partition % PARTITIONS].append(message)
    for partition, log in logs.items():  # replays land after the originals, as a retrying producer's would
        count = len(log) // 8
        logs[partition] = log + (log[len(log) - count :] if protocol == "avro" else rng.sample(log, count))
    rows = []
    for partition, log in logs.items():
        for offset, message in enumerate(log):
            rows.append((message.key, message.value, "shop", partition, offset, None, 0, []))
    # interleave partitions at random while keeping each partition's order (what a consumer sees)
    cursors = dict.fromkeys(logs, 0)
    ordered = []
    by_partition = {p: [r for r in rows if r[3] == p] for p in logs}
    while any(cursors[p] < len(by_partition[p]) for p in logs):
        partition = rng.choice([p for p in logs if cursors[p] < len(by_partition[p])])
        ordered.append(by_partition[partition][cursors[partition]])
        cursors[partition] += 1
    size = -(-len(ordered) // files)
    for index in range(files):
        chunk = ordered[index * size : (index + 1) * size]
        spark.createDataFrame(chunk, KAFKA_SCHEMA).coalesce(1).write.parquet(str(folder / f"part-{index:03d}"))
    return len(ordered)


def stream(spark: Any, folder: Path) -> Any:
    return spark.readStream.schema(KAFKA_SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(folder / "part-*"))


def with_truncate(feed: Changefeed, table: str = "items") -> Changefeed:
    """The changefeed with ``TRUNCATE TABLE`` of ``table`` a third of the way in: the table's state is the rows its
    later changes leave."""
    stamps = [e.commit_ts or 0 for e in feed.events]
    index = next(i for i in range(len(stamps) // 3, len(stamps)) if stamps[i - 1] + 1 < stamps[i])  # between txns
    previous = stamps[index - 1]
    truncate = DDLEvent(
        ddl_type=DDLType.TRUNCATE,
        sql=f"TRUNCATE TABLE `shop`.`{table}`",
        database="shop",
        table=table,
        commit_ts=previous + 1,
        table_schema=feed.final_schemas[table],
    )
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    key = feed.final_schemas[table].handle_key
    for event in feed.events[index:]:
        if isinstance(event, RowChange) and event.table == table:
            image = event.image
            if event.op is Op.DELETE:
                rows.pop(tuple(image[k] for k in key), None)
            else:
                rows[tuple(image[k] for k in key)] = dict(image)
    events = [*feed.events[:index], truncate, *feed.events[index:]]
    return attrs.evolve(feed, events=events, state={**feed.state, table: rows})


def config(tmp_path: Path, protocol: str = "debezium", options: dict[str, str] | None = None) -> JobConfig:
    """The job over ``tmp_path/messages``. Its batches are small, which ``decode=auto`` hands to the codec: the
    JVM plan is named, as every large batch takes it (``decode`` in ``options`` wins)."""
    return JobConfig(
        protocol=protocol,
        source=SourceSpec.parse(f"file://{tmp_path / 'messages'}"),
        target=str(tmp_path / "tables"),
        checkpoint=str(tmp_path / "checkpoint"),
        options={"decode": "jvm", **(options or {})},
    )


def _feed_options(protocol: str, request: pytest.FixtureRequest) -> tuple[dict[str, object], dict[str, str]]:
    """The encoder's and the job's options for a changefeed of ``protocol`` (skipped where its codec is not
    installed)."""
    if protocol not in installed_codecs():
        pytest.skip(f"needs the {protocol} codec")
    # Avro's deletes stay TiCDC's default tombstones (no commit ts): the job orders them by their partition
    encoder_options: dict[str, object] = {} if protocol == "simple" else {"enable-tidb-extension": True}
    if protocol == "canal-json":  # TiCDC's own flavour writes ENUM/SET as numbers without their members
        encoder_options["content-compatible"] = True
    job_options: dict[str, str] = {}
    if protocol == "avro":  # a real registry (Apicurio): executors register and fetch schemas too
        registry = request.getfixturevalue("schema_registry")
        encoder_options["schema-registry"] = job_options["schema-registry"] = registry.url
    return encoder_options, job_options


@pytest.mark.parametrize("protocol", ["debezium", "canal-json", "simple", "avro"])
def test_changefeed_with_replays_ends_in_the_source_state(
    spark: Any, tmp_path: Path, protocol: str, request: pytest.FixtureRequest
) -> None:
    encoder_options, job_options = _feed_options(protocol, request)
    feed = generate(seed=11, transactions=60)
    record(spark, feed, tmp_path / "messages", files=3, seed=1, protocol=protocol, options=encoder_options)
    reports: list[BatchReport] = []
    run(spark, config(tmp_path, protocol, job_options), reports.append, stream(spark, tmp_path / "messages"))
    assert [r.batch_id for r in reports] == [0, 1, 2]
    assert all(r.decoded["jvm"] > 0 for r in reports)  # the row changes were typed by Spark
    assert differences(str(tmp_path / "tables"), feed) == []


DRAWS_SEED_ENV = "CDC_DRAWS_SEED"  # set by ``nox -s draws``


@pytest.mark.skipif(not os.environ.get(DRAWS_SEED_ENV), reason=f"changefeeds drawn where {DRAWS_SEED_ENV} is set")
@pytest.mark.parametrize("protocol", ["debezium", "canal-json", "simple", "avro"])
def test_fresh_changefeeds_with_replays_end_in_the_source_state(
    spark: Any, tmp_path: Path, protocol: str, request: pytest.FixtureRequest
) -> None:
    """:func:`test_changefeed_with_replays_ends_in_the_source_state` over a changefeed, replays and batches drawn
    from the run's seed (``nox -s draws``; ``CDC_DRAWS_ROWS`` / 3 transactions), each target table then equal to
    the source's table."""
    encoder_options, job_options = _feed_options(protocol, request)
    seed = int(os.environ[DRAWS_SEED_ENV])
    feed = generate(seed=seed, transactions=max(4, int(os.environ.get("CDC_DRAWS_ROWS", "300")) // 3))
    files = 2 + seed % 3
    record(spark, feed, tmp_path / "messages", files=files, seed=seed, protocol=protocol, options=encoder_options)
    reports: list[BatchReport] = []
    run(spark, config(tmp_path, protocol, job_options), reports.append, stream(spark, tmp_path / "messages"))
    assert [r.batch_id for r in reports] == list(range(files))
    assert differences(str(tmp_path / "tables"), feed) == []


def test_by_default_a_small_batch_is_decoded_by_the_codec_with_the_same_result(spark: Any, tmp_path: Path) -> None:
    feed = generate(seed=11, transactions=60)
    record(spark, feed, tmp_path / "messages", files=2, seed=1)
    reports: list[BatchReport] = []
    job = attrs.evolve(config(tmp_path), options={})  # decode=auto
    run(spark, job, reports.append, stream(spark, tmp_path / "messages"))
    assert [r.batch_id for r in reports] == [0, 1]
    assert all(0 < r.messages < SMALL_BATCH for r in reports)
    assert [r.decoded for r in reports] == [{"jvm": 0, "codec": r.messages} for r in reports]
    assert differences(str(tmp_path / "tables"), feed) == []


def test_a_small_batch_is_decoded_and_counted_with_interpreted_expressions(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch's messages choose the expressions its decode and summary run with (the tables then choose by their
    own rows: ``test_apply.py``); a larger batch than :data:`~cdc_spark.expression_mode.INTERPRETED_ROWS` compiles."""
    feed = generate(seed=11, transactions=40)
    record(spark, feed, tmp_path / "messages", files=2, seed=1)
    seen: list[str | None] = []
    summarize = scd1_batch.summarize_all

    def summarize_all(pending: Any, floors: Any) -> Any:
        seen.append(pending[0].changes.sparkSession.conf.get(FACTORY_MODE, None))
        monkeypatch.setattr(expression_mode, "INTERPRETED_ROWS", 1)  # every later batch is a large one
        monkeypatch.setattr(expression_mode, "INTERPRETED_ROWS_A_TABLE", 0)  # whatever its tables
        return summarize(pending, floors)

    monkeypatch.setattr(scd1_batch, "summarize_all", summarize_all)
    run(spark, attrs.evolve(config(tmp_path), options={}), None, stream(spark, tmp_path / "messages"))
    assert seen == ["NO_CODEGEN", "FALLBACK"]
    assert differences(str(tmp_path / "tables"), feed) == []


def test_a_batch_of_tables_with_few_changes_each_is_decoded_and_counted_with_interpreted_expressions(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch over the rows' line but with fewer than ``INTERPRETED_ROWS_A_TABLE`` changes per table is decoded
    interpreted (by the tables of the batch before it) and summarized so (by its own)."""
    feed = generate(seed=11, transactions=40)
    record(spark, feed, tmp_path / "messages", files=2, seed=1)
    seen: list[tuple[str, str | None]] = []
    summarize, decode = scd1_batch.summarize_all, job_module.decode

    def decoded(frame: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(("decode", frame.sparkSession.conf.get(FACTORY_MODE, None)))
        return decode(frame, *args, **kwargs)

    def summarize_all(pending: Any, floors: Any) -> Any:
        seen.append(("summary", pending[0].changes.sparkSession.conf.get(FACTORY_MODE, None)))
        monkeypatch.setattr(expression_mode, "INTERPRETED_ROWS", 1)  # every later batch is a large one by its rows
        return summarize(pending, floors)

    monkeypatch.setattr(job_module, "decode", decoded)
    monkeypatch.setattr(scd1_batch, "summarize_all", summarize_all)
    run(spark, attrs.evolve(config(tmp_path), options={}), None, stream(spark, tmp_path / "messages"))
    assert seen == [(step, "NO_CODEGEN") for _ in range(2) for step in ("decode", "summary")]
    assert differences(str(tmp_path / "tables"), feed) == []


def test_the_expressions_are_interpreted_under_a_line_of_rows_that_grows_with_the_tables() -> None:
    mode, line, per_table = (
        expression_mode.expression_mode,
        expression_mode.INTERPRETED_ROWS,
        expression_mode.INTERPRETED_ROWS_A_TABLE,
    )
    assert [mode(line - 1), mode(line), mode(None), mode(None, 500)] == [
        "NO_CODEGEN",
        "FALLBACK",
        "FALLBACK",
        "FALLBACK",
    ]
    assert [mode(line - 1, 3), mode(line, 3)] == ["NO_CODEGEN", "FALLBACK"]  # few tables: the rows' line alone
    assert [mode(200 * per_table - 1, 200), mode(200 * per_table, 200)] == ["NO_CODEGEN", "FALLBACK"]


def test_a_simple_streams_later_batches_decode_no_sample_of_a_schema_version_again(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Simple's shape is a table's schema version. The job gives each batch the schema versions of the batches before
    it, so a later batch keeps the readers of every version an earlier one described and fetches and decodes no
    sample of it again; a version new to the stream (the ADD COLUMN half way) is described once, where it appears."""
    if "simple" not in installed_codecs():
        pytest.skip("needs the simple codec")
    from cdc_spark.decoding import Decoder
    from cdc_spark.decoding.jvm.shapes import ShapeReuse

    batches: list[list[tuple[tuple[str, str, str], bool]]] = []  # per batch: each JVM shape, and whether it was sampled
    described = ShapeReuse.described

    def recorded(self: Any, samples: Any, known: Any) -> Any:
        batches.append([((s.database, s.table, s.shape), s.message is not None) for s in samples if s.jvm])
        return described(self, samples, known)

    monkeypatch.setattr(ShapeReuse, "described", recorded)
    Decoder.shared(spark).clear()  # shapes an earlier test of this session described are not this stream's
    feed = generate(seed=11, transactions=60)
    record(spark, feed, tmp_path / "messages", files=3, seed=1, protocol="simple", options={})
    reports: list[BatchReport] = []
    run(spark, config(tmp_path, "simple"), reports.append, stream(spark, tmp_path / "messages"))
    assert [r.batch_id for r in reports] == [0, 1, 2]
    assert len(batches) == 3, batches
    sampled = [shape for batch in batches for shape, with_message in batch if with_message]
    assert len(sampled) == len(set(sampled)), batches  # no version's sample decoded twice
    assert any(not with_message for batch in batches[1:] for _, with_message in batch), batches  # some were kept
    assert differences(str(tmp_path / "tables"), feed) == []


def busy_executors(spark: Any) -> set[str]:
    """Executors (not the driver) that have run tasks in this application."""
    summaries = spark.sparkContext._jsc.sc().statusStore().executorList(True).iterator()
    busy = set()
    while summaries.hasNext():
        summary = summaries.next()
        if summary.id() != "driver" and summary.totalTasks() > 0:
            busy.add(str(summary.id()))
    return busy


@pytest.mark.parametrize("fmt", ["delta", "iceberg"])
def test_replays_a_late_stale_update_deletes_and_a_truncate_end_in_targets_equal_to_the_source(
    spark: Any, tmp_path: Path, fmt: str
) -> None:
    feed = with_truncate(generate(seed=13, transactions=60))
    assert any(isinstance(e, RowChange) and e.op is Op.DELETE for e in feed.events)
    record(spark, feed, tmp_path / "messages", files=3, seed=3)  # replays of earlier messages land late
    reports: list[BatchReport] = []
    run(spark, config(tmp_path, options={"table-format": fmt}), reports.append, stream(spark, tmp_path / "messages"))
    assert [r.batch_id for r in reports] == [0, 1, 2]
    assert differences(str(tmp_path / "tables"), feed, table_format=fmt) == []
    stale = generate(seed=13, transactions=60)  # without the truncate, items would hold its earlier rows too
    assert differences(str(tmp_path / "tables"), stale, table_format=fmt)
    if spark.sparkContext.master.startswith("local-cluster"):  # tasks, the table writes among them, ran there
        assert len(busy_executors(spark)) == 2


@pytest.mark.parametrize("fmt", ["delta", "iceberg"])
def test_kill_mid_stream_and_restart_from_checkpoint(spark: Any, tmp_path: Path, monkeypatch: Any, fmt: str) -> None:
    import cdc_spark.job as job

    feed = generate(seed=12, transactions=60)
    record(spark, feed, tmp_path / "messages", files=4, seed=2)
    cfg = config(tmp_path, options={"table-format": fmt})

    # 1st run dies in the middle of a batch: some of its tables committed, Spark has not recorded it
    monkeypatch.setattr(job, "make_sink", lambda s, c: KillingSink(make_sink(s, c), fail_after=2))
    with pytest.raises(Exception, match="killed after 2"):
        run(spark, cfg, None, stream(spark, tmp_path / "messages"))

    # 2nd run dies after every table of its first batch committed, before Spark records the offsets
    monkeypatch.setattr(job, "make_sink", make_sink)

    def die_after_commit(report: BatchReport) -> None:
        raise InjectedFault(f"killed after batch {report.batch_id} committed")

    with pytest.raises(Exception, match="killed after batch"):
        run(spark, cfg, die_after_commit, stream(spark, tmp_path / "messages"))

    # 3rd run completes: replayed tables are skipped, nothing is lost or applied twice
    reports: list[BatchReport] = []
    run(spark, cfg, reports.append, stream(spark, tmp_path / "messages"))
    assert reports and reports[0].skipped  # the replayed batch found its commits
    assert differences(str(tmp_path / "tables"), feed, table_format=fmt) == []


def test_with_watermarks_changes_wait_for_every_partition_and_a_change_at_the_watermark_is_applied(
    spark: Any, tmp_path: Path
) -> None:
    feed = generate(seed=15, transactions=30)
    options: dict[str, object] = {"enable-tidb-extension": True, "content-compatible": True}
    record(spark, feed, tmp_path / "messages", files=2, seed=4, protocol="canal-json", options=options)
    # then each partition's watermark, equal to the newest commit ts (TiCDC's resolved ts may equal a commit ts)
    newest = max(e.commit_ts or 0 for e in feed.events)
    [mark] = get_codec("canal-json").encoder(options).encode(Watermark(ts=newest))
    marks = [(None, mark.value, "shop", p, 100_000, None, 0, []) for p in range(PARTITIONS)]
    spark.createDataFrame(marks, KAFKA_SCHEMA).coalesce(1).write.parquet(str(tmp_path / "messages" / "part-002"))
    reports: list[BatchReport] = []
    job = config(tmp_path, "canal-json", {"watermark": "true"})
    run(spark, job, reports.append, stream(spark, tmp_path / "messages"))
    assert [r.batch_id for r in reports] == [0, 1, 2]
    assert not reports[0].applied and reports[0].held > 0  # no partition has reported a watermark yet
    assert reports[2].watermark == newest and reports[2].held == 0
    assert differences(str(tmp_path / "tables"), feed) == []
