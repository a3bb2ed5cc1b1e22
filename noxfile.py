"""The one entry point for checks, tests, the demo, benchmarks and docs.

Sessions that need the whole stack share one environment (``.nox/workspace``) so that pyspark and the other
heavy wheels are installed once; it is rebuilt when any pyproject changes. Dependencies are read from the
packages' own pyproject files and the workspace ``[dependency-groups]``, never repeated here.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).parent
PACKAGES = ["cdc-core", "cdc-testing", "cdc-debezium", "cdc-simple", "cdc-avro", "cdc-canal", "cdc-spark"]
# Extras installed in the workspace so that every optional path is tested.
EXTRAS = {
    "cdc-core": "[snappy,lz4,fsspec,kafka,registry]",
    "cdc-testing": "[kafka,databases]",
    "cdc-debezium": "[avro]",
    "cdc-spark": "[yaml,demo]",
}
WORKSPACE = ROOT / ".nox" / "workspace"

nox.options.sessions = ["lint", "typecheck", "tests"]
nox.options.default_venv_backend = "venv"


def _present_packages() -> list[str]:
    return [name for name in PACKAGES if (ROOT / "packages" / name / "pyproject.toml").exists()]


def _groups(*names: str) -> list[str]:
    pyproject = nox.project.load_toml(ROOT / "pyproject.toml")
    requirements: list[str] = []
    for name in names:
        requirements += nox.project.dependency_groups(pyproject, name)
    return requirements


def _fingerprint() -> str:
    digest = hashlib.sha256()
    # VERSION too: the editable installs carry the version in their metadata
    for path in sorted([ROOT / "pyproject.toml", ROOT / "VERSION", *ROOT.glob("packages/*/pyproject.toml")]):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def workspace(session: nox.Session) -> Path:
    """The shared environment with every package (editable) and the test/typecheck tools; returns its bin."""
    bindir = WORKSPACE / ("Scripts" if os.name == "nt" else "bin")
    stamp = WORKSPACE / ".fingerprint"
    if stamp.exists() and stamp.read_text() == _fingerprint():
        return bindir
    if not bindir.exists():
        session.run(sys.executable, "-m", "venv", str(WORKSPACE), external=True)
    python = str(bindir / "python")
    session.run(python, "-m", "pip", "install", "-q", "-U", "pip", external=True)
    editable: list[str] = []
    for name in _present_packages():
        editable += ["-e", f"packages/{name}{EXTRAS.get(name, '')}"]
    session.run(python, "-m", "pip", "install", "-q", *editable, *_groups("test", "typecheck", "docs"), external=True)
    stamp.write_text(_fingerprint())
    return bindir


def provision(session: nox.Session, purpose: str) -> None:
    """The system's parts the session runs (a JDK and Maven; for ``tests`` also MariaDB and PostgreSQL), installed
    where missing: see .ci/provision.py."""
    session.run(sys.executable, str(ROOT / ".ci" / "provision.py"), "--for", purpose, external=True)


def _env(bindir: Path) -> dict[str, str]:
    """Spark's Python workers must run the workspace interpreter."""
    python = str(bindir / "python")
    path = f"{bindir}{os.pathsep}{os.environ['PATH']}"
    return {"PYSPARK_PYTHON": python, "PYSPARK_DRIVER_PYTHON": python, "PATH": path}


@nox.session(venv_backend="none")
def version(session: nox.Session) -> None:
    """Set the one version of every package: ``nox -s version -- 1.2.3`` writes VERSION and the sibling pins."""
    if len(session.posargs) != 1 or not re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?", session.posargs[0]):
        session.error("usage: nox -s version -- MAJOR.MINOR.PATCH")
    new = session.posargs[0]
    old = (ROOT / "VERSION").read_text().strip()
    (ROOT / "VERSION").write_text(new + "\n")
    pin = re.compile(r"(\"cdc-[a-z]+(?:\[[a-z0-9,]+\])?==)" + re.escape(old) + '"')
    for path in ROOT.glob("packages/*/pyproject.toml"):
        path.write_text(pin.sub(lambda m: m[1] + new + '"', path.read_text()))
    session.log(f"{old} -> {new}: VERSION and the sibling pins (packages/cdc-core/tests/test_versions.py checks)")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and format check over the whole repository."""
    session.install(*_groups("lint"))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(venv_backend="none")
def typecheck(session: nox.Session) -> None:
    """mypy --strict over every package's sources and the benchmarks."""
    bindir = workspace(session)
    sources = [f"packages/{name}/src" for name in _present_packages()]
    # benchmarks too: nothing else imports them, so a name removed from a package broke one silently; they import
    # their sibling modules (workload, spark_timing, ...) by bare name, hence MYPYPATH
    if (ROOT / "benchmarks").exists():
        sources.append("benchmarks")
    env = {**_env(bindir), "MYPYPATH": str(ROOT / "benchmarks")}
    session.run(str(bindir / "mypy"), *sources, external=True, env=env)


@nox.session(venv_backend="none")
def tests(session: nox.Session) -> None:
    """Every package's unit tests, then the cross-package tests in integration/ (real broker, real Spark)."""
    provision(session, "tests")
    bindir = workspace(session)
    paths = [f"packages/{name}/tests" for name in _present_packages() if (ROOT / "packages" / name / "tests").exists()]
    if (ROOT / "integration").exists():
        paths.append("integration")
    # the slowest tests printed at the end: where CI's time goes
    args = session.posargs or ["-q", "-p", "no:cacheprovider", "--benchmark-disable", "--durations=20", *paths]
    session.run(str(bindir / "python"), "-m", "pytest", *args, external=True, env=_env(bindir))


@nox.session(venv_backend="none")
def demo(session: nox.Session) -> None:
    """The main job on an embedded default (see README)."""
    provision(session, "jvm")
    bindir = workspace(session)
    demo_module = ROOT / "packages" / "cdc-spark" / "src" / "cdc_spark" / "demo.py"
    if demo_module.exists():
        session.run(str(bindir / "python"), "-m", "cdc_spark.demo", *session.posargs, external=True, env=_env(bindir))
        return
    corpus = ROOT.parent / "shared" / "corpus" / "ticdc"
    for path in sorted(corpus.rglob("*.value.*.json")):
        session.run(str(bindir / "cdc"), "decode", "--protocol", "debezium", str(path), external=True, env=_env(bindir))


@nox.session(venv_backend="none")
def bench(session: nox.Session) -> None:
    """Benchmarks: every codec against its raw-library baseline, measured in the same run, printed as ratios."""
    provision(session, "jvm")
    bindir = workspace(session)
    # pytest 9 merges a file given after its directory into the directory's collection: name the directory only
    # when no benchmark file or directory is given
    paths = [arg for arg in session.posargs if not arg.startswith("-") and (ROOT / arg.split("::")[0]).exists()]
    session.run(
        str(bindir / "python"),
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--benchmark-only",
        "--benchmark-columns=min,median,ops,rounds",
        "--timeout=0",  # a 10^6-message run takes longer than the tests' per-test limit
        "-o",
        "python_files=bench_*.py",
        *([] if paths else ["benchmarks"]),
        *session.posargs,
        external=True,
        env=_env(bindir),
    )


@nox.session(venv_backend="none", default=False)
def soak(session: nox.Session) -> None:
    """cdc apply at scale under faults, on the real broker (not in CI; CI runs the short soak of
    packages/cdc-spark/tests/test_soak.py): ``nox -s soak [-- --messages 100000 ...]``; prints the figures."""
    bindir = workspace(session)
    session.run(str(bindir / "python"), "-m", "cdc_spark.soak", *session.posargs, external=True, env=_env(bindir))


@nox.session(venv_backend="none", default=False)
def fuzz(session: nox.Session) -> None:
    """Long coverage-guided fuzzing with atheris (not in CI)."""
    bindir = workspace(session)
    session.run(str(bindir / "python"), "-m", "pip", "install", "-q", "atheris", external=True)
    session.run(str(bindir / "python"), "fuzz/run.py", *session.posargs, external=True, env=_env(bindir))


@nox.session(venv_backend="none", default=False)
def draws(session: nox.Session) -> None:
    """The decode-equality checks over input drawn afresh (not in CI, whose draws are fixed by the tests' source):
    rows of every column type; changefeeds of three tables with their DDL, watermarks, replays and a broken message
    over three partitions (ROWS / 3 transactions), decoded, and applied by the job to tables equal to the source's.
    ``nox -s draws [-- SEED [ROWS]]``. The seed is printed; given again, it draws the same input in the same order."""
    provision(session, "jvm")
    bindir = workspace(session)
    seed = session.posargs[0] if session.posargs else str(secrets.randbelow(1 << 31))
    rows = session.posargs[1] if len(session.posargs) > 1 else "300"
    if not (seed.isdigit() and rows.isdigit()):
        session.error("usage: nox -s draws [-- SEED [ROWS]] (whole numbers)")
    session.log(f"draws: seed {seed}, {rows} rows a set-up (again: nox -s draws -- {seed} {rows})")
    env = {**_env(bindir), "CDC_DRAWS_SEED": seed, "CDC_DRAWS_ROWS": rows}
    tests = [f"packages/cdc-spark/tests/{name}.py" for name in ("test_decode_equality", "test_job")]
    session.run(str(bindir / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--benchmark-disable", *tests,
                "-k", "fresh_draws or fresh_changefeeds", external=True, env=env)  # fmt: skip


@nox.session(venv_backend="none")
def docs(session: nox.Session) -> None:
    """Build the documentation site into site/ (the type tables are rendered from the code first)."""
    bindir = workspace(session)
    if (ROOT / "docs" / "gen_types.py").exists():
        session.run(str(bindir / "python"), "docs/gen_types.py", external=True, env=_env(bindir))
    session.run(str(bindir / "mkdocs"), "build", "--strict", "--site-dir", "site", external=True, env=_env(bindir))


# The fast tests of the Debezium codec's column readers (its value converters, column types and converter choice).
_DEBEZIUM_READER_TESTS = [
    "tests/test_decode_golden.py",
    "tests/test_connector_shapes.py",
    "tests/test_flavours.py",
    "tests/test_malformed.py",
    "tests/test_tables.py",
    "tests/test_values.py",
]
# Mutation testing: each module that turns wire values into typed values (and the Simple schema cache), its
# package, and that package's fast tests (no broker, no registry, no Spark), which alone must kill its mutants.
MUTATE: dict[str, tuple[str, list[str]]] = {
    "cdc_core.textual": ("cdc-core", ["tests/test_textual.py", "tests/test_type_tables.py", "tests/test_naming.py"]),
    "cdc_debezium.wire_values": ("cdc-debezium", _DEBEZIUM_READER_TESTS),
    "cdc_debezium.wire_types": ("cdc-debezium", _DEBEZIUM_READER_TESTS),
    "cdc_debezium.column_readers": ("cdc-debezium", _DEBEZIUM_READER_TESTS),
    "cdc_canal.inbound": (
        "cdc-canal",
        [
            "tests/test_decode_golden.py",
            "tests/test_canal_server_shapes.py",
            "tests/test_malformed.py",
            "tests/test_values.py",
        ],
    ),
    "cdc_simple.columns": (
        "cdc-simple",
        [
            "tests/test_columns.py",
            "tests/test_column_values.py",
            "tests/test_values.py",
            "tests/test_decimal_scale.py",
            "tests/test_decode_spec.py",
            "tests/test_malformed.py",
            "tests/test_encode.py",
        ],
    ),
    "cdc_simple.cache": (
        "cdc-simple",
        ["tests/test_cache.py", "tests/test_schema_lifecycle.py", "tests/test_decode_spec.py"],
    ),
    # apply's SQL text and metadata-column names; the rest of the apply plan and the watermark gate need Spark
    "cdc_spark.merge.statements": ("cdc-spark", ["tests/test_statements.py"]),
    "cdc_spark.merge.columns": ("cdc-spark", ["tests/test_statements.py"]),
    "cdc_spark.merge.evolution": ("cdc-spark", ["tests/test_evolution.py"]),
    # these need a Spark session: see MUTATE_WITH_SPARK
    "cdc_spark.watermark": ("cdc-spark", ["tests/test_watermark.py"]),
    # the apply plan is the same SQL for both table formats: Delta only (Iceberg's catalog in a kept session would
    # keep the warehouse of the first run)
    "cdc_spark.merge.batch": ("cdc-spark", ["tests/test_batch.py"]),
    "cdc_spark.merge.spec": ("cdc-spark", ["tests/test_statements.py", "tests/test_apply.py", "-k", "not iceberg"]),
    "cdc_spark.merge.scd1": ("cdc-spark", ["tests/test_scd1_plan.py"]),
    "cdc_spark.merge.scd2": ("cdc-spark", ["tests/test_scd2_plan.py"]),
    # the exactly-once bookkeeping: the committed-batch check, what a replay still writes, the app's last mark,
    # the tombstone purge schedule (the writes that carry the marks run in test_apply.py on both formats)
    "cdc_spark.sinks.commits": ("cdc-spark", ["tests/test_commits.py"]),
    "cdc_avro.datum": (
        "cdc-avro",
        [
            "tests/test_datum.py",
            "tests/test_values.py",
            "tests/test_decimal_scale.py",
            "tests/test_schema_generation.py",
        ],
    ),
}


# Modules whose tests need a Spark session. mutmut forks one child per mutant from the process that ran the tests
# first; with CDC_TEST_SPARK_KEEP=1 the tests' `spark` fixture (packages/cdc-spark/tests/conftest.py) keeps that
# process's session alive and each child reuses it over a py4j connection of its own, so the JVM starts once per
# module instead of once per mutant. One child at a time: the children share the JVM's session and catalog.
MUTATE_WITH_SPARK: frozenset[str] = frozenset(
    {
        "cdc_spark.watermark",
        "cdc_spark.merge.batch",
        "cdc_spark.merge.spec",
        "cdc_spark.merge.scd1",
        "cdc_spark.merge.scd2",
    }
)


def _mutmut_config(module: str, tests: list[str]) -> str:
    """The scratch project's pyproject: mutmut's settings plus the repository's pytest settings."""
    root = nox.project.load_toml(ROOT / "pyproject.toml")
    pytest_ini = root["tool"]["pytest"]["ini_options"]
    markers = "not kafka and not slow" if module in MUTATE_WITH_SPARK else "not kafka and not spark and not slow"
    lines = [
        "[tool.mutmut]",
        'source_paths = ["src"]',
        f"only_mutate = [{_toml_string('src/' + module.replace('.', '/') + '.py')}]",
        f"pytest_add_cli_args_test_selection = [{', '.join(map(_toml_string, tests))}]",
        # fixed hypothesis seed: a mutant is killed or not, never by luck
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "--benchmark-disable", "--hypothesis-seed=0", '
        f'"-m", "{markers}"]',
        "",
        "[tool.pytest.ini_options]",
    ]
    for key, value in pytest_ini.items():
        rendered = f"[{', '.join(map(_toml_string, value))}]" if isinstance(value, list) else repr(value)
        lines.append(f"{key} = {rendered}")
    return "\n".join(lines) + "\n"


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@nox.session(venv_backend="none", default=False)
def mutate(session: nox.Session) -> None:
    """Mutation testing with mutmut (not in CI): ``nox -s mutate [-- module ...]``, see docs/development.md."""
    bindir = workspace(session)
    python = str(bindir / "python")
    session.run(python, "-m", "pip", "install", "-q", *_groups("mutate"), external=True)
    modules = session.posargs or list(MUTATE)
    unknown = [module for module in modules if module not in MUTATE]
    if unknown:
        session.error(f"unknown module(s) {unknown}; choose from {sorted(MUTATE)}")
    children = os.environ.get("MUTATE_CHILDREN", str(os.cpu_count() or 2))
    scores: list[str] = []
    for module in modules:
        package, tests = MUTATE[module]
        # a fresh scratch project per module: mutmut copies src/ and tests/ into its mutants/ and runs there
        scratch = ROOT / ".nox" / "mutate" / module
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.copytree(ROOT / "packages" / package / "src", scratch / "src")
        shutil.copytree(ROOT / "packages" / package / "tests", scratch / "tests")
        (scratch / "pyproject.toml").write_text(_mutmut_config(module, tests))
        env = _env(bindir)
        workers = children
        if module in MUTATE_WITH_SPARK:
            env = {**env, "CDC_TEST_SPARK_KEEP": "1"}
            workers = "1"
        with session.chdir(scratch):
            session.run(str(bindir / "mutmut"), "run", "--max-children", workers, external=True, env=env)
            output = session.run(
                str(bindir / "mutmut"), "results", "--all", "true", external=True, env=env, silent=True
            )
        statuses = dict(line.strip().rsplit(": ", 1) for line in str(output).splitlines() if ": " in line)
        killed = [name for name, status in statuses.items() if status in ("killed", "timeout")]
        survivors = sorted(set(statuses) - set(killed))
        percent = 100 * len(killed) / len(statuses) if statuses else 0.0
        scores.append(f"{module}: {len(killed)}/{len(statuses)} killed ({percent:.1f} %)")
        session.log(f"{module}: {len(survivors)} not killed (diff: cd {scratch} && mutmut show NAME)")
        for name in survivors:
            session.log(f"  {statuses[name]:>12}  {name}")
    for line in scores:
        session.log(line)
