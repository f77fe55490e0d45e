"""A throwaway PostgreSQL cluster for the tests: started once per session (once per xdist
worker) in a temporary directory, removed after. It listens on a unix socket in that directory
only, never on a TCP port: two clusters started side by side cannot clash (a port found free
and released can be taken by anyone before the server binds it), and a restart finds its
socket where it was. fsync is off.

As root, the server programs run as the ``postgres`` user (PostgreSQL refuses root); otherwise
as the current user. Each test gets its own database, cloned from a template that already holds
hz's and procrastinate's schema (``CREATE DATABASE … TEMPLATE``, ~0.1 s).

The binaries come from the Debian package ``postgresql`` (``.ci/install-debian`` installs it):
without them the fixture fails, never skips.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

TEMPLATE = "hz_template"


def server_bin() -> Path:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    raise RuntimeError(
        "PostgreSQL server binaries (initdb, pg_ctl) not found: run .ci/install-debian "
        "(as root: apt-get install -y --no-install-recommends postgresql)"
    )


#: The socket's number (``.s.PGSQL.<port>`` in the cluster's own directory): no TCP port is
#: bound, so any number will do.
PORT = 5432


@dataclass(frozen=True)
class Cluster:
    root: Path
    port: int
    user: str
    bin: Path
    as_postgres: bool

    def _argv(self, program: str, *args: str) -> list[str]:
        argv = [str(self.bin / program), *args]
        return ["runuser", "-u", "postgres", "--", *argv] if self.as_postgres else argv

    def run(self, program: str, *args: str) -> None:
        subprocess.run(self._argv(program, *args), check=True, capture_output=True, timeout=60)

    def dsn(self, dbname: str) -> str:
        return f"host={self.root} port={self.port} user={self.user} dbname={dbname}"

    @property
    def socket(self) -> Path:
        return self.root / f".s.PGSQL.{self.port}"

    def start(self) -> None:
        options = (
            f"-c listen_addresses='' -p {self.port} -k {self.root} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self.run(
            "pg_ctl",
            "-D",
            str(self.root / "data"),
            "-l",
            str(self.root / "server.log"),
            "-w",
            "-t",
            "30",
            "start",
            "-o",
            options,
        )

    def stop(self, mode: str = "fast") -> None:
        self.run("pg_ctl", "-D", str(self.root / "data"), "-m", mode, "-w", "-t", "30", "stop")

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.dsn("postgres"), autocommit=True) as c:
            c.execute(sql)  # type: ignore[arg-type]

    def new_database(self) -> str:
        name = f"hz_{secrets.token_hex(6)}"
        self.admin(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
        return name

    def drop_database(self, name: str) -> None:
        with contextlib.suppress(Exception):
            self.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextlib.contextmanager
def cluster() -> Iterator[Cluster]:
    """initdb + pg_ctl start in a fresh temporary directory; stopped and removed after."""
    binaries = server_bin()
    as_postgres = os.geteuid() == 0
    root = Path(tempfile.mkdtemp(prefix="hzpg."))
    if as_postgres:
        entry = pwd.getpwnam("postgres")
        os.chown(root, entry.pw_uid, entry.pw_gid)
    made = Cluster(root, PORT, "postgres", binaries, as_postgres)
    try:
        made.run(
            "initdb",
            "-D",
            str(root / "data"),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        )
        made.start()
        try:
            made.admin(f"CREATE DATABASE {TEMPLATE}")
            _prepare_template(made)
            yield made
        finally:
            with contextlib.suppress(Exception):
                made.stop("immediate")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _prepare_template(made: Cluster) -> None:
    """hz's tables and procrastinate's schema, once: every test database is a copy."""
    from hz.runtime.ledger.pg.db import PgDb

    db = PgDb(made.dsn(TEMPLATE), where=TEMPLATE)
    db.migrate()
    db.close()
