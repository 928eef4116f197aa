"""Getting a SparkSession the way an audit needs it (pyspark imported lazily, here only).

* an active session in this process (a notebook, a test fixture) is reused and left running;
* under ``spark-submit`` (``PYSPARK_GATEWAY_PORT`` is set) the submit's session and master
  are used;
* otherwise a new session on ``--master`` (default ``local[*]``) is started with the settings
  measured on small machines (design §7): no UI, no progress bar, 2-4 shuffle partitions
  (the local cores), a private ``spark.local.dir``, log4j at ``error``, workers on this
  interpreter (``PYSPARK_PYTHON``) and, for local masters, ``SPARK_LOCAL_IP=127.0.0.1`` unless set.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rmqlb.errors import InputError

INSTALL_HINT = "pyspark is not installed: pip install 'rmqlb[spark]' (or use --engine local)"

# Spark prints "Setting default log level" when the level of its own logger differs from the
# root's: both are set to error here, so the banner and the start-up warnings stay quiet.
_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex
logger.spark.name = org.apache.spark
logger.spark.level = error
"""


class SparkUnavailable(InputError):
    """pyspark (or its Java runtime) is missing: the spark engine cannot run (exit 2)."""


def require_pyspark() -> None:
    """Raise :class:`SparkUnavailable` with the install hint when pyspark is missing."""
    try:
        import pyspark  # noqa: PLC0415
        import pyspark.sql  # noqa: F401, PLC0415
    except ImportError:
        raise SparkUnavailable(INSTALL_HINT) from None


def is_local_master(master: str | None) -> bool:
    """``local``, ``local[*]``, ``local-cluster[...]`` (or none: we default to local)."""
    return master is None or master.startswith("local")


def shuffle_partitions(master: str) -> int:
    """Shuffle partitions for the audit's small aggregates: the cores of a local master,
    within 2..4 (one task per core; measured on 2 cores, 2 partitions instead of 4 took
    a third off the aggregation), and 4 elsewhere.

    >>> [shuffle_partitions(m) for m in ("local", "local[2]", "local[16]", "spark://h:7077")]
    [2, 2, 4, 4]
    """
    match = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\s*\d+)?\])?", master)
    if match is None:
        return 4
    cores = match.group(1)
    n = (os.cpu_count() or 1) if cores == "*" else int(cores or 1)
    return min(4, max(2, n))


def session_conf(master: str, work_dir: Path) -> dict[str, str]:
    """The Spark settings of a session rmqlb starts itself."""
    log4j = work_dir / "log4j2.properties"
    java_opts = f"-Dlog4j2.configurationFile={log4j.as_uri()}"
    return {
        "spark.master": master,
        "spark.app.name": "rmqlb-audit",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(shuffle_partitions(master)),
        "spark.local.dir": str(work_dir / "local"),
        "spark.driver.extraJavaOptions": java_opts,
        "spark.executor.extraJavaOptions": java_opts,
        "spark.sql.session.timeZone": "UTC",
    }


@contextmanager
def spark_session(master: str | None = None) -> Iterator[Any]:
    """Yield a SparkSession for an audit; stop it afterwards only if it was started here."""
    require_pyspark()
    from pyspark.sql import SparkSession  # noqa: PLC0415

    active = SparkSession.getActiveSession()
    if active is not None:
        current = active.sparkContext.master
        if master is not None and master != current:
            raise InputError(
                f"--master {master}: a SparkSession on {current} is already running here"
            )
        yield active
        return
    if master is None and os.environ.get("PYSPARK_GATEWAY_PORT"):
        yield SparkSession.builder.getOrCreate()  # spark-submit: its master, its conf
        return
    effective = master or "local[*]"
    if is_local_master(effective):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    work_dir = Path(tempfile.mkdtemp(prefix="rmqlb-spark-"))
    (work_dir / "log4j2.properties").write_text(_LOG4J)
    session = None
    try:
        builder = SparkSession.builder
        for key, value in session_conf(effective, work_dir).items():
            builder = builder.config(key, value)
        try:
            session = builder.getOrCreate()
        except Exception as exc:  # no Java, bad master URL ...
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise SparkUnavailable(f"cannot start Spark on {effective}: {first}") from exc
        session.sparkContext.setLogLevel("ERROR")
        yield session
    finally:
        if session is not None:
            session.stop()
        shutil.rmtree(work_dir, ignore_errors=True)
        # the JVM outlives session.stop() in this process and may still touch its local dir
        atexit.register(shutil.rmtree, work_dir, ignore_errors=True)
