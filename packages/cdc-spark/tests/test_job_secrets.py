"""The job's configuration can be printed and logged without leaking broker or registry credentials."""

from __future__ import annotations

from cdc_spark.job import JobConfig, SourceSpec


def test_job_config_repr_masks_credentials() -> None:
    config = JobConfig(
        protocol="avro",
        source=SourceSpec.parse("kafka://broker:9092/shop"),
        target="tables",
        checkpoint="checkpoint",
        options={
            "source.kafka.sasl.password": "pa55-word-1",
            "schema-registry": "https://svc:token-xyz@registry:8081",
            "source.kafka.sasl.username": "svc",
        },
    )
    text = repr(config)
    assert "pa55-word-1" not in text
    assert "token-xyz" not in text
    assert "sasl.username': 'svc'" in text
    assert config.options["source.kafka.sasl.password"] == "pa55-word-1"  # masked in the repr only
