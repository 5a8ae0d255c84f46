"""Experiments on a Dask cluster (``stellar compare --cluster ADDRESS``): one task per run.

Workers share no disk with the client. Each algorithm x seed is one task: the client hands it
the plan, the covering arrays it needs (built once, by the client) and the run's state, a
packed run directory (``pack``: gzipped tar with the SQLite archive copied by SQLite's backup
API, so a run may be writing it). The task runs in a temporary directory on its worker and
returns the finished directory, which the client unpacks into ``EXPERIMENT/runs/NAME``.

While it runs, a task reports progress to the client (events on a topic) and, every
``STELLAR_CHECKPOINT_SECONDS`` (default 5), checkpoints its directory into a
``distributed.Variable`` on the scheduler; the client copies each checkpoint into the
experiment directory. The client sets that Variable to the run's local state before it
submits, so the task always starts from the latest state: when a worker dies, Dask runs the
task again elsewhere and it resumes (:mod:`stellar.resume`); when the client is restarted,
finished runs are skipped and partial ones resume from their local copy.

``client``: address, connection, submitting and following the tasks; ``task``: a run on a
worker; ``pack``: a run directory as bytes and back. See docs/cluster.md.
"""

from stellar.cluster.client import connect, execute, parse_cluster
from stellar.cluster.pack import pack, unpack

__all__ = ["connect", "execute", "pack", "parse_cluster", "unpack"]
