"""Real MariaDB and PostgreSQL servers for tests, from the machine's Debian packages, on loopback.

Each server runs from its own binaries (``mariadb-install-db``/``mariadbd``, ``initdb``/``postgres``; no systemd)
in a temporary data directory on a free port, configured as Debezium needs it: MariaDB with a ROW binlog, FULL
row images, a server id and GTIDs; PostgreSQL with ``wal_level=logical`` (pgoutput) and room for replication
slots. Both run in UTC. Under root they run as the package's system user (``mysql``, ``postgres``), since
PostgreSQL refuses root and MariaDB wants an explicit user. :meth:`close` stops the server and removes its
directory.

Nothing is installed here: a missing binary is a :class:`DatabaseUnavailableError` naming it and the Debian
package that provides it (``nox -s tests`` installs them: ``.ci/provision.py``). Client connections use PyMySQL
and psycopg (``pip install 'cdc-testing[databases]'``).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from cdc_testing.kafka import free_port
from cdc_testing.processes import ServerProcess, log_tail

if TYPE_CHECKING:
    import psycopg
    import pymysql

START_TIMEOUT_S: Final = 60.0
STOP_TIMEOUT_S: Final = 30.0
USER: Final = "cdc"
PASSWORD: Final = "cdc-secret"
DATABASE: Final = "inventory"

MARIADB_PACKAGE: Final = "mariadb-server"
POSTGRES_PACKAGE: Final = "postgresql postgresql-contrib"


class DatabaseUnavailableError(RuntimeError):
    """A database server cannot be had here: a binary is missing, or the server did not come up."""


def _find(names: Sequence[str], extra_dirs: Sequence[str], package: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
        for folder in extra_dirs:
            candidate = Path(folder) / name
            if candidate.exists():
                return str(candidate)
    raise DatabaseUnavailableError(
        f"no {' or '.join(names)} on PATH or in {', '.join(extra_dirs)}: install the Debian package(s) {package}"
    )


def _postgres_bindirs() -> list[str]:
    """Debian keeps PostgreSQL's server binaries out of PATH, in /usr/lib/postgresql/<major>/bin (newest first)."""
    found = glob.glob("/usr/lib/postgresql/*/bin")
    return sorted(found, key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0, reverse=True)


def missing_mariadb() -> str | None:
    """Why MariaDB cannot be started here, or None."""
    try:
        _find(("mariadbd",), ("/usr/sbin",), MARIADB_PACKAGE)
        _find(("mariadb-install-db",), ("/usr/bin",), MARIADB_PACKAGE)
    except DatabaseUnavailableError as exc:
        return str(exc)
    return None


def missing_postgres() -> str | None:
    """Why PostgreSQL cannot be started here, or None."""
    try:
        bindirs = _postgres_bindirs()
        _find(("initdb",), bindirs, POSTGRES_PACKAGE)
        _find(("postgres",), bindirs, POSTGRES_PACKAGE)
    except DatabaseUnavailableError as exc:
        return str(exc)
    return None


class _Server(ServerProcess):
    """A server process in a temporary home, run as ``system_user`` when we are root."""

    name = "server"
    system_user = "nobody"
    stop_timeout_s = STOP_TIMEOUT_S

    def __init__(self) -> None:
        super().__init__(f"cdc-{self.name}-")
        self.port = free_port()
        self._run_as: pwd.struct_passwd | None = None
        if os.geteuid() == 0:
            try:
                self._run_as = pwd.getpwnam(self.system_user)
            except KeyError as exc:
                raise DatabaseUnavailableError(
                    f"running as root, and there is no {self.system_user!r} user to run {self.name} as"
                ) from exc
            os.chown(self.home, self._run_as.pw_uid, self._run_as.pw_gid)

    @property
    def host(self) -> str:
        return "127.0.0.1"

    def _user_args(self) -> dict[str, Any]:
        if self._run_as is None:
            return {}
        return {"user": self._run_as.pw_uid, "group": self._run_as.pw_gid, "extra_groups": []}

    def _run(self, command: list[str], what: str) -> None:
        done = subprocess.run(
            command, capture_output=True, timeout=120, check=False, cwd=self.home, **self._user_args()
        )
        if done.returncode != 0:
            output = (done.stdout + done.stderr).decode(errors="replace")[-3000:]
            raise DatabaseUnavailableError(f"{what} failed (exit {done.returncode}):\n{output}")

    def _log_tail(self) -> str:
        return log_tail((self.stderr_log, self.home / "server.log"), 3000)

    def _wait(self, probe: Any) -> None:
        """Until ``probe()`` succeeds (the server accepts clients); the process dying is an error at once."""
        assert self._process is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise DatabaseUnavailableError(
                    f"{self.name} exited with code {self._process.returncode} while starting; log:\n{self._log_tail()}"
                )
            try:
                probe()
                return
            except Exception as exc:
                last = exc
                time.sleep(0.2)
        self.close()
        raise DatabaseUnavailableError(f"{self.name} did not accept clients within {START_TIMEOUT_S:.0f} s: {last}")


class MariaDB(_Server):
    """MariaDB with what Debezium's MariaDB connector needs, and a user ``cdc`` with every privilege."""

    name = "mariadb"
    system_user = "mysql"
    server_id = 1

    @property
    def socket(self) -> Path:
        return self.home / "mariadb.sock"

    def start(self) -> MariaDB:
        daemon = _find(("mariadbd",), ("/usr/sbin",), MARIADB_PACKAGE)
        install = _find(("mariadb-install-db",), ("/usr/bin",), MARIADB_PACKAGE)
        data = self.home / "data"
        self._run(
            [
                install,
                "--no-defaults",
                f"--datadir={data}",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--skip-name-resolve",
            ],
            "mariadb-install-db",
        )
        self._spawn(
            [
                daemon,
                "--no-defaults",
                f"--datadir={data}",
                f"--socket={self.socket}",
                f"--pid-file={self.home / 'mariadb.pid'}",
                f"--log-error={self.home / 'server.log'}",
                f"--port={self.port}",
                "--bind-address=127.0.0.1",
                "--skip-name-resolve",
                # what Debezium reads: row events with every column, GTIDs, a server id of our own
                "--log-bin=binlog",
                "--binlog-format=ROW",
                "--binlog-row-image=FULL",
                f"--server-id={self.server_id}",
                "--gtid-strict-mode=ON",
                "--log-slave-updates=ON",
                "--default-time-zone=+00:00",
                "--character-set-server=utf8mb4",
                "--collation-server=utf8mb4_general_ci",
                # small and quick: a test server holds a few rows
                "--innodb-buffer-pool-size=32M",
                "--innodb-log-file-size=16M",
                "--innodb-flush-log-at-trx-commit=0",
                "--sync-binlog=0",
                "--performance-schema=OFF",
            ],
            **self._user_args(),
        )
        self._wait(self._bootstrap)
        return self

    def _bootstrap(self) -> None:
        import pymysql

        root = pymysql.connect(unix_socket=str(self.socket), user="root", password="", autocommit=True)
        with root, root.cursor() as cursor:
            cursor.execute("CREATE USER IF NOT EXISTS %s@'%%' IDENTIFIED BY %s", (USER, PASSWORD))
            cursor.execute("GRANT ALL PRIVILEGES ON *.* TO %s@'%%' WITH GRANT OPTION", (USER,))
            cursor.execute(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")

    def connect(self, database: str | None = DATABASE, **options: Any) -> pymysql.connections.Connection[Any]:
        """A PyMySQL connection as ``cdc`` over TCP, in UTC, autocommitting unless told otherwise."""
        import pymysql

        settings: dict[str, Any] = {"autocommit": True, "init_command": "SET time_zone = '+00:00'"}
        settings.update(options)
        return pymysql.connect(
            host=self.host, port=self.port, user=USER, password=PASSWORD, database=database, **settings
        )


class PostgreSQL(_Server):
    """PostgreSQL with ``wal_level=logical`` and slots to spare; trust authentication on loopback."""

    name = "postgres"
    system_user = "postgres"
    superuser = "postgres"

    def start(self) -> PostgreSQL:
        bindirs = _postgres_bindirs()
        initdb = _find(("initdb",), bindirs, POSTGRES_PACKAGE)
        postgres = _find(("postgres",), bindirs, POSTGRES_PACKAGE)
        data = self.home / "data"
        self._run(
            [initdb, "-D", str(data), "-U", self.superuser, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"],
            "initdb",
        )
        self._spawn(
            [
                postgres,
                "-D",
                str(data),
                "-p",
                str(self.port),
                "-k",
                str(self.home),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "wal_level=logical",
                "-c",
                "max_replication_slots=20",
                "-c",
                "max_wal_senders=20",
                "-c",
                "TimeZone=UTC",
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "shared_buffers=32MB",
                "-c",
                "logging_collector=off",
            ],
            **self._user_args(),
        )
        self._wait(self._bootstrap)
        return self

    def _bootstrap(self) -> None:
        import psycopg

        with psycopg.connect(self.dsn("postgres"), autocommit=True) as admin:
            exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone()
            if exists is None:
                admin.execute(f"CREATE DATABASE {DATABASE}")

    def dsn(self, database: str = DATABASE) -> str:
        return f"host={self.host} port={self.port} user={self.superuser} dbname={database}"

    def connect(self, database: str = DATABASE, **options: Any) -> psycopg.Connection[Any]:
        """A psycopg connection as the superuser over TCP, in UTC, autocommitting unless told otherwise."""
        import psycopg

        settings: dict[str, Any] = {"autocommit": True, "options": "-c TimeZone=UTC"}
        settings.update(options)
        return psycopg.connect(self.dsn(database), **settings)


@contextlib.contextmanager
def running_mariadb() -> Iterator[MariaDB]:
    server = MariaDB()
    try:
        yield server.start()
    finally:
        server.close()


@contextlib.contextmanager
def running_postgres() -> Iterator[PostgreSQL]:
    server = PostgreSQL()
    try:
        yield server.start()
    finally:
        server.close()


__all__ = [
    "DATABASE",
    "PASSWORD",
    "USER",
    "DatabaseUnavailableError",
    "MariaDB",
    "PostgreSQL",
    "missing_mariadb",
    "missing_postgres",
    "running_mariadb",
    "running_postgres",
]
