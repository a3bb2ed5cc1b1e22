"""The settings of one ``cdc apply`` run: from flags, from a TOML or YAML file, or built in Python.

Every long flag of ``cdc apply`` is a key of the same name (``sink-uri``, ``include-tables``...): a repeatable
flag takes a list, ``--option K=V`` and ``--conf K=V`` are tables. Flags override the file (a table key by key).
In a file, ``${NAME}`` is the environment variable NAME (``$$`` a dollar sign), and any text setting or table key
``NAME-file`` reads the value of ``NAME`` from that file, so that no secret needs to be on a command line or in
the file itself. :class:`Settings` is also the Python API: ``cdc_spark.config.run(Settings(...))``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from cdc_core.errors import ConfigError
from cdc_core.secrets import redact_options

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdc_spark.job import BatchReport, JobConfig

Kind = Literal["text", "number", "flag", "list", "table"]
# file key (= long flag) -> its kind; the attribute of Settings is the key with '_' for '-'
KINDS: Final[Mapping[str, Kind]] = {
    "protocol": "text",
    "source": "text",
    "sink-uri": "text",
    "target": "text",
    "checkpoint": "text",
    "keys": "list",
    "scd": "list",
    "track-columns": "list",
    "include-tables": "list",
    "exclude-tables": "list",
    "route": "list",
    "include-columns": "list",
    "exclude-columns": "list",
    "ddl": "text",
    "tombstone-hours": "number",
    "metadata-columns": "list",
    "once": "flag",
    "continuous": "flag",
    "option": "table",
    "master": "text",
    "conf": "table",
    "quiet": "flag",
    "progress": "text",
    "progress-file": "text",
    "max-dead-letters": "number",
    "retries": "number",
    "retry-backoff": "number",
    "broker-timeout": "number",
}
FILE_SUFFIX: Final = "-file"
DEFAULT_TOMBSTONE_HOURS: Final = 168.0
_VARIABLE: Final = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def read_secret(path: str, key: str) -> str:
    """The value of ``key`` from the file ``key-file`` names: its text without the trailing newline."""
    try:
        return Path(path).read_text(encoding="utf-8").rstrip("\r\n")
    except OSError as exc:
        raise ConfigError(f"{key}{FILE_SUFFIX} {path!r}: cannot read it ({exc.strerror})") from None


def _scalar(value: object, key: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise ConfigError(f"{key}: expected text, a number or true/false, not {type(value).__name__}")


def _table(value: object, key: str) -> dict[str, str] | None:
    """A table of text values: nested tables flattened with dots (TOML's ``source.x = 1`` is nested), ``K-file``
    keys read from their files."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key}: expected a table of NAME = VALUE, not {type(value).__name__}")
    flat: dict[str, str] = {}

    def walk(prefix: str, table: Mapping[Any, Any]) -> None:
        for name, item in table.items():
            full = f"{prefix}{name}"
            if isinstance(item, Mapping):
                walk(full + ".", item)
            else:
                flat[full] = _scalar(item, f"{key}.{full}")

    walk("", value)
    for name in [n for n in flat if n.endswith(FILE_SUFFIX)]:
        plain = name.removesuffix(FILE_SUFFIX)
        if plain in flat:
            raise ConfigError(f"{key}: both {plain} and {name} are given")
        flat[plain] = read_secret(flat.pop(name), f"{key}.{plain}")
    return flat


def _list(value: object, key: str) -> tuple[str, ...] | None:
    """A list of rules; a bare value is a list of one; a table ``{REGEX: VALUE}`` is rules ``REGEX=VALUE``."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return tuple(
            f"{k}={','.join(map(str, v)) if isinstance(v, list) else _scalar(v, key)}" for k, v in value.items()
        )
    if isinstance(value, (list, tuple)):
        return tuple(_scalar(v, key) for v in value)
    return (_scalar(value, key),)


def _text(value: object, key: str) -> str | None:
    return None if value is None else _scalar(value, key)


def _number(value: object, key: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        with contextlib.suppress(ValueError):
            return float(value)
    raise ConfigError(f"{key}: expected a number, not {value!r}")


def _whole(value: float, key: str) -> int:
    """A whole number of 0 or more."""
    if value < 0 or value != int(value):
        raise ConfigError(f"{key} {value:g}: expected a whole number of 0 or more")
    return int(value)


def _positive(seconds: float, key: str) -> float:
    if not seconds > 0:
        raise ConfigError(f"{key} {seconds:g}: expected a number of seconds above 0")
    return seconds


def _flag(value: object, key: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise ConfigError(f"{key}: expected true or false, not {value!r}")


_CONVERT: Final[Mapping[Kind, Callable[[object, str], Any]]] = {
    "text": _text,
    "number": _number,
    "flag": _flag,
    "list": _list,
    "table": _table,
}


@attrs.frozen(kw_only=True)
class Settings:
    """One run's settings; None is "not given" (a default, or the file's value under flags)."""

    protocol: str | None = None
    source: str | None = None
    sink_uri: str | None = attrs.field(default=None, repr=False)
    target: str | None = None
    checkpoint: str | None = None
    keys: tuple[str, ...] | None = None
    scd: tuple[str, ...] | None = None
    track_columns: tuple[str, ...] | None = None
    include_tables: tuple[str, ...] | None = None
    exclude_tables: tuple[str, ...] | None = None
    route: tuple[str, ...] | None = None
    include_columns: tuple[str, ...] | None = None
    exclude_columns: tuple[str, ...] | None = None
    ddl: str | None = None
    tombstone_hours: float | None = None
    metadata_columns: tuple[str, ...] | None = None
    once: bool | None = None
    continuous: bool | None = None
    # credentials among the codec, source and Spark settings never reach a repr
    option: dict[str, str] | None = attrs.field(default=None, repr=lambda o: repr(redact_options(o or {})))
    master: str | None = None
    conf: dict[str, str] | None = attrs.field(default=None, repr=lambda o: repr(redact_options(o or {})))
    quiet: bool | None = None
    progress: str | None = None
    progress_file: str | None = None
    max_dead_letters: float | None = None
    retries: float | None = None
    retry_backoff: float | None = None
    broker_timeout: float | None = None

    def __attrs_post_init__(self) -> None:
        for key, kind in KINDS.items():  # each setting in its one form: lists as tuples, table values as text...
            name = key.replace("-", "_")
            object.__setattr__(self, name, _CONVERT[kind](getattr(self, name), key))
        if self.once and self.continuous:
            raise ConfigError("once and continuous are both set: choose one")

    @classmethod
    def from_mapping(cls, values: Mapping[str, object], *, origin: str = "settings") -> Settings:
        """Settings from file keys (``sink-uri``...), ``NAME-file`` keys read from their files."""
        given: dict[str, object] = {}
        for key, value in values.items():
            name = str(key)
            if name in KINDS:
                given[name] = value
            elif name.endswith(FILE_SUFFIX) and KINDS.get(name.removesuffix(FILE_SUFFIX)) == "text":
                plain = name.removesuffix(FILE_SUFFIX)
                if plain in values:
                    raise ConfigError(f"{origin}: both {plain} and {name} are given")
                given[plain] = read_secret(_text(value, name) or "", plain)
            else:
                close = difflib.get_close_matches(name, list(KINDS), n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                raise ConfigError(f"{origin}: unknown setting {name!r}{hint}; settings: {', '.join(KINDS)}")
        arguments: dict[str, Any] = {key.replace("-", "_"): value for key, value in given.items()}
        try:
            return cls(**arguments)
        except ConfigError as exc:
            raise ConfigError(f"{origin}: {exc}") from None

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Settings:
        """Settings from a ``.toml``, ``.yaml`` or ``.yml`` file, ``${NAME}`` replaced from the environment."""
        file = Path(path)
        if file.suffix.lower() not in (".toml", ".yaml", ".yml"):
            raise ConfigError(f"config file {str(file)!r}: expected a .toml, .yaml or .yml file")
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"config file {str(file)!r}: cannot read it ({exc.strerror})") from None
        document = _parse(text, file)
        if not isinstance(document, Mapping):
            raise ConfigError(f"{file}: expected settings (key = value), not {type(document).__name__}")
        return cls.from_mapping(_expand(document, str(file), ""), origin=str(file))

    def overridden_by(self, flags: Settings) -> Settings:
        """These settings with every setting ``flags`` gives replaced (tables merged key by key)."""
        merged: dict[str, Any] = {}  # attribute -> value
        for field in attrs.fields(Settings):
            mine, theirs = getattr(self, field.name), getattr(flags, field.name)
            if isinstance(mine, dict) and isinstance(theirs, dict):
                merged[field.name] = {**mine, **theirs}
            else:
                merged[field.name] = theirs if theirs is not None else mine
        if flags.once or flags.continuous:  # one mode: the flag's
            merged["once"], merged["continuous"] = flags.once, flags.continuous
        return Settings(**merged)

    def job_config(self) -> JobConfig:
        """The job's configuration (``cdc_spark.job.JobConfig``): the sink URI resolved, defaults filled in."""
        from cdc_core.registry import get_codec
        from cdc_core.sinkuri import SinkUri
        from cdc_spark.job import JobConfig, SourceSpec
        from cdc_spark.merge.columns import metadata_columns
        from cdc_spark.routing import Routing

        # a URI may name no protocol (TiCDC's Simple docs set it in the changefeed's config): --protocol gives it
        uri = SinkUri.parse(self.sink_uri, protocol_required=False) if self.sink_uri else None
        protocol = uri.protocol_given(self.protocol, flag="protocol") if uri is not None else self.protocol
        if protocol is None:
            raise ConfigError("give protocol (--protocol) or sink-uri (--sink-uri)")
        options: dict[str, Any] = dict(self.option or {})
        if uri is not None:  # the changefeed's sink URI: its brokers and topic are the source, its options the codec's
            options = {**get_codec(protocol).used_options(uri.parameters), **options}
        source = self.source or (f"kafka://{','.join(uri.brokers)}/{uri.topic or ''}" if uri is not None else None)
        if source is None:
            raise ConfigError("give source (--source) or sink-uri (--sink-uri)")
        if not self.target:
            raise ConfigError("give target (--target): the directory of the tables")
        from cdc_spark.ddl_policy import check_policy
        from cdc_spark.retries import DEFAULT_BACKOFF_S, DEFAULT_RETRIES, RetryPolicy
        from cdc_spark.source.checks import DEFAULT_BROKER_TIMEOUT_S

        return JobConfig(
            protocol=protocol,
            source=SourceSpec.parse(source),
            target=self.target,
            checkpoint=self.checkpoint or f"{self.target.rstrip('/')}/_checkpoint",
            continuous=bool(self.continuous),
            options=options,
            tombstone_retention=dt.timedelta(
                hours=DEFAULT_TOMBSTONE_HOURS if self.tombstone_hours is None else self.tombstone_hours
            ),
            metadata_columns=metadata_columns(",".join(self.metadata_columns or ())),
            routing=Routing(
                include_tables=self.include_tables or (),
                exclude_tables=self.exclude_tables or (),
                routes=self.route or (),
                keys=self.keys or (),
                scd=self.scd or (),
                track_columns=self.track_columns or (),
                include_columns=self.include_columns or (),
                exclude_columns=self.exclude_columns or (),
            ),
            ddl=check_policy(self.ddl or "evolve"),
            max_dead_letters=None
            if self.max_dead_letters is None
            else _whole(self.max_dead_letters, "max-dead-letters"),
            retry=RetryPolicy(
                retries=DEFAULT_RETRIES if self.retries is None else _whole(self.retries, "retries"),
                backoff_s=DEFAULT_BACKOFF_S if self.retry_backoff is None else self.retry_backoff,
            ),
            broker_timeout=DEFAULT_BROKER_TIMEOUT_S
            if self.broker_timeout is None
            else _positive(self.broker_timeout, "broker-timeout"),
        )


def _parse(text: str, file: Path) -> object:
    suffix = file.suffix.lower()
    if suffix == ".toml":
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{file}: not TOML ({exc})") from None
    if suffix in (".yaml", ".yml"):  # PyYAML reads YAML 1.1: yes/no/on/off are true/false, as in YAML files of old
        try:
            import yaml
        except ImportError:
            raise ConfigError(f"{file}: reading YAML needs PyYAML: pip install 'cdc-spark[yaml]'") from None
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{file}: not YAML ({exc})") from None
    raise AssertionError(suffix)  # Settings.load checked it


def _expand(value: object, origin: str, key: str) -> Any:
    """``${NAME}`` replaced by the environment variable in every text of the document (``$$``: a ``$``)."""
    if isinstance(value, str):

        def variable(found: re.Match[str]) -> str:
            if found[1] is None:
                return "$"
            if found[1] not in os.environ:
                raise ConfigError(f"{origin}: {key}: the environment variable {found[1]} is not set")
            return os.environ[found[1]]

        return _VARIABLE.sub(variable, value)
    if isinstance(value, Mapping):
        return {k: _expand(v, origin, f"{key}.{k}" if key else str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, origin, key) for v in value]
    return value


def run(
    settings: Settings,
    spark: SparkSession | None = None,
    progress: Callable[[BatchReport], None] | None = None,
) -> None:
    """Run the job these settings describe, as ``cdc apply`` does (``spark``: an existing session, else one built
    with ``master`` and ``conf``)."""
    from cdc_spark import job
    from cdc_spark.session import build_session

    config = settings.job_config()
    session = spark or build_session(settings.master, app_name="cdc-apply", conf=dict(settings.conf or {}))
    job.run(session, config, progress)


__all__ = ["FILE_SUFFIX", "KINDS", "Settings", "read_secret", "run"]
