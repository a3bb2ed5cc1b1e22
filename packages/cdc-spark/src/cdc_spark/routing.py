"""Which source tables a run applies, the target each lands in, and each target's settings.

Every rule is text as a user writes it on the command line or in a config file (docs/spark.md, "Routing and
filtering"). Table patterns are regular expressions matched against the whole ``database.table`` name:

* ``include_tables`` / ``exclude_tables``: a source table is applied when some include pattern matches it (or
  none is given) and no exclude pattern does;
* ``routes``: ``REGEX=TARGET``; the first route whose pattern matches a source table names its target,
  ``database.table`` with ``{database}``, ``{table}`` and the pattern's groups (``{1}``, ``{name}``) filled in;
  a table no route matches keeps its name. Several sources may land in one target (see :func:`target_keys`);
* ``keys``, ``scd``, ``track_columns``, ``include_columns``, ``exclude_columns``: ``TABLE_REGEX=VALUE`` for the
  targets the pattern matches (the first matching rule wins), or a bare ``VALUE`` for every other target.

Source patterns (include, exclude, routes) match source names; the per-table settings match target names (the
same unless a route renames).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, Generic, TypeVar

import attrs

from cdc_core.errors import ConfigError

if TYPE_CHECKING:
    from cdc_core.schema import TableSchema

T = TypeVar("T")
# Directories beside the tables under --target: a target may not take their names
RESERVED_DATABASES: Final = frozenset({"_cdc_state", "_cdc_keys", "_dead_letters", "_checkpoint"})
_PLACEHOLDER: Final = re.compile(r"\{(\w+)\}")


@attrs.frozen
class Rule(Generic[T]):
    """One ``TABLE_REGEX=VALUE`` rule (``pattern`` None: a bare value, every table no rule matches)."""

    pattern: re.Pattern[str] | None
    value: T

    def matches(self, name: str) -> bool:
        return self.pattern is None or self.pattern.fullmatch(name) is not None


def compile_pattern(text: str, setting: str) -> re.Pattern[str]:
    try:
        return re.compile(text)
    except re.error as exc:
        raise ConfigError(f"{setting} {text!r}: not a regular expression ({exc})") from None


def column_names(text: str, setting: str, rule: str) -> tuple[str, ...]:
    names = tuple(c.strip() for c in text.split(",") if c.strip())
    if not names:
        raise ConfigError(f"{setting} {rule!r}: no column names")
    return names


def scd_type(text: str, setting: str, rule: str) -> int:
    if text.strip() not in ("1", "2"):
        raise ConfigError(f"{setting} {rule!r}: the SCD type is 1 or 2, not {text.strip()!r}")
    return int(text)


def _rules(
    texts: Iterable[str], setting: str, value: Callable[[str, str, str], T], *, bare: bool = True
) -> tuple[Rule[T], ...]:
    """``TABLE_REGEX=VALUE`` rules (split at the last ``=``: values never hold one) and at most one bare value."""
    rules: list[Rule[T]] = []
    for text in texts:
        pattern, sep, raw = text.rpartition("=")
        if not sep:
            if not bare:
                raise ConfigError(f"{setting} {text!r}: expected TABLE_REGEX=VALUE")
            if any(r.pattern is None for r in rules):
                raise ConfigError(f"{setting}: two values for every table ({text!r} and an earlier one)")
            rules.append(Rule(None, value(text, setting, text)))
        elif not pattern:
            raise ConfigError(f"{setting} {text!r}: no table pattern before '='")
        else:
            rules.append(Rule(compile_pattern(pattern, setting), value(raw, setting, text)))
    # rules with a pattern first, in the order given; the bare value last
    return tuple(sorted(rules, key=lambda r: r.pattern is None))


def first(rules: Sequence[Rule[T]], name: str) -> T | None:
    return next((r.value for r in rules if r.matches(name)), None)


def check_target(name: str, source: str, rule: str) -> str:
    """A route's target must be ``database.table``, each a name a directory can take."""
    database, sep, table = name.partition(".")
    bad = not sep or not database or not table or "." in table
    bad = bad or any(c in name for c in "/\\") or database in RESERVED_DATABASES or ".." in name
    if bad:
        raise ConfigError(
            f"route {rule!r} names {name!r} for {source}: a target is database.table (no '/', '\\', and not "
            f"one of {', '.join(sorted(RESERVED_DATABASES))})"
        )
    return name


@attrs.frozen
class Route:
    """``REGEX=TARGET``: the target of the source tables the pattern matches."""

    pattern: re.Pattern[str]
    target: str
    text: str

    @classmethod
    def parse(cls, text: str) -> Route:
        pattern, sep, target = text.rpartition("=")
        if not sep or not pattern or not target:
            raise ConfigError(f"route {text!r}: expected REGEX=TARGET (TARGET: database.table, {{database}}, ...)")
        compiled = compile_pattern(pattern, "route")
        for field in _PLACEHOLDER.findall(target):
            known = field in ("database", "table") or field in compiled.groupindex
            known = known or (field.isdigit() and int(field) <= compiled.groups)
            if not known:
                raise ConfigError(
                    f"route {text!r}: {{{field}}} is neither {{database}}, {{table}} nor a group of the pattern"
                )
        return cls(compiled, target, text)

    def apply(self, database: str, table: str) -> str | None:
        """The target of ``database.table`` if this route matches it."""
        source = f"{database}.{table}"
        found = self.pattern.fullmatch(source)
        if found is None:
            return None
        fields: dict[str, str] = {"database": database, "table": table}
        fields.update({str(i): g or "" for i, g in enumerate(found.groups(), start=1)})
        fields.update({k: v or "" for k, v in found.groupdict().items()})
        return check_target(_PLACEHOLDER.sub(lambda m: fields[m[1]], self.target), source, self.text)


@attrs.frozen(kw_only=True)
class TableSettings:
    """What applying one target takes besides its frame: the lookup the job's apply calls per target."""

    keys: tuple[str, ...] | None = None  # None: the sources' primary key (see target_keys)
    scd: int = 1
    track_columns: tuple[str, ...] | None = None
    include_columns: tuple[str, ...] | None = None
    exclude_columns: tuple[str, ...] | None = None


def _texts(value: Iterable[str] | str) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


@attrs.frozen(kw_only=True)
class Routing:
    """The rules of one run, as written (see the module doc); ``settings`` is the per-target lookup."""

    include_tables: tuple[str, ...] = attrs.field(default=(), converter=_texts)
    exclude_tables: tuple[str, ...] = attrs.field(default=(), converter=_texts)
    routes: tuple[str, ...] = attrs.field(default=(), converter=_texts)
    keys: tuple[str, ...] = attrs.field(default=(), converter=_texts)
    scd: tuple[str, ...] = attrs.field(default=(), converter=_texts)
    track_columns: tuple[str, ...] = attrs.field(default=(), converter=_texts)
    include_columns: tuple[str, ...] = attrs.field(default=(), converter=_texts)
    exclude_columns: tuple[str, ...] = attrs.field(default=(), converter=_texts)
    _compiled: _Compiled = attrs.field(init=False, eq=False, repr=False)

    @_compiled.default
    def _compile(self) -> _Compiled:
        return _Compiled.of(self)

    @property
    def filters_tables(self) -> bool:
        return bool(self.include_tables or self.exclude_tables)

    def selected(self, database: str, table: str) -> bool:
        """Whether the run applies source table ``database.table``."""
        name = f"{database}.{table}"
        rules = self._compiled
        if rules.include and not any(p.fullmatch(name) for p in rules.include):
            return False
        return not any(p.fullmatch(name) for p in rules.exclude)

    def target(self, database: str, table: str) -> str:
        """The target ``database.table`` of a source table: the first route that matches, else its own name."""
        for route in self._compiled.routes:
            found = route.apply(database, table)
            if found is not None:
                return found
        return f"{database}.{table}"

    def targets(self, tables: Iterable[tuple[str, str]]) -> dict[str, tuple[tuple[str, str], ...]]:
        """The selected source tables grouped by target, both in name order."""
        grouped: dict[str, list[tuple[str, str]]] = {}
        for database, table in sorted(tables):
            if self.selected(database, table):
                grouped.setdefault(self.target(database, table), []).append((database, table))
        return {name: tuple(grouped[name]) for name in sorted(grouped)}

    def settings(self, target: str, defaults: TableSettings | None = None) -> TableSettings:
        """The settings of target ``database.table``: each from the first rule that matches it, else ``defaults``."""
        base = defaults or TableSettings()
        rules = self._compiled
        scd = first(rules.scd, target)
        return TableSettings(
            keys=first(rules.keys, target) or base.keys,
            scd=scd if scd is not None else base.scd,
            track_columns=first(rules.track_columns, target) or base.track_columns,
            include_columns=first(rules.include_columns, target) or base.include_columns,
            exclude_columns=first(rules.exclude_columns, target) or base.exclude_columns,
        )


@attrs.frozen
class _Compiled:
    include: tuple[re.Pattern[str], ...]
    exclude: tuple[re.Pattern[str], ...]
    routes: tuple[Route, ...]
    keys: tuple[Rule[tuple[str, ...]], ...]
    scd: tuple[Rule[int], ...]
    track_columns: tuple[Rule[tuple[str, ...]], ...]
    include_columns: tuple[Rule[tuple[str, ...]], ...]
    exclude_columns: tuple[Rule[tuple[str, ...]], ...]

    @classmethod
    def of(cls, routing: Routing) -> _Compiled:
        keys = [part for text in routing.keys for part in text.split(";") if part.strip()]  # 'a=id;b=x,y' too
        return cls(
            include=tuple(compile_pattern(p, "include-tables") for p in routing.include_tables),
            exclude=tuple(compile_pattern(p, "exclude-tables") for p in routing.exclude_tables),
            routes=tuple(Route.parse(r) for r in routing.routes),
            keys=_rules(keys, "keys", column_names),
            scd=_rules(routing.scd, "scd", scd_type),
            track_columns=_rules(routing.track_columns, "track-columns", column_names),
            include_columns=_rules(routing.include_columns, "include-columns", column_names),
            exclude_columns=_rules(routing.exclude_columns, "exclude-columns", column_names),
        )


def target_keys(
    target: str, keys: tuple[str, ...] | None, sources: Mapping[tuple[str, str], TableSchema | None]
) -> tuple[str, ...]:
    """The key columns of a target: ``keys`` when set, else the primary (or not-null unique) key of its sources.

    Sources routed into one target must have the same key, and a row of one source and a row of another with
    equal key values are the same target row (the newer change wins): give keys that tell the sources apart (a
    shard column) when their key values overlap.
    """
    if keys:
        return keys
    found: dict[tuple[str, ...], list[str]] = {}
    for (database, table), schema in sorted(sources.items()):
        handle = tuple(schema.handle_key) if schema is not None else ()
        if not handle:
            raise ConfigError(
                f"table {database}.{table} has no primary or unique key in its schema: pass --keys "
                f"'{re.escape(target)}=COLUMNS'"
            )
        found.setdefault(handle, []).append(f"{database}.{table}")
    if not found:
        hint = f"--keys '{re.escape(target)}=COLUMNS'"
        raise ConfigError(f"target {target}: its key is not known to this run: pass {hint}")
    if len(found) > 1:
        described = "; ".join(f"{', '.join(names)} key ({', '.join(key)})" for key, names in found.items())
        raise ConfigError(
            f"target {target} is routed from tables with different keys ({described}): pass --keys "
            f"'{re.escape(target)}=COLUMNS'"
        )
    return next(iter(found))


__all__ = ["RESERVED_DATABASES", "Route", "Routing", "Rule", "TableSettings", "target_keys"]
