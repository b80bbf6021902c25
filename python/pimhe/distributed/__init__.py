"""pimhe's workloads over a Ray cluster (``pip install "pimhe[distributed]"``).

The study's server step (the distributed ``pimhe eval``): the driver reads the public inputs,
puts the study and the public keys into Ray's object store once, ships the submissions in
shards (each file in exactly one shard), workers add up each shard into a partial aggregate
and combine partials in a tree, and the driver writes the aggregates ``pimhe decrypt``
reads::

    with pimhe.distributed.connect("local:2"):          # or "auto", or "HOST:PORT"
        result = pimhe.distributed.evaluate("pub", "submissions", "agg.pimhe")
    result.users                                         # submissions aggregated

No secret key is read, put or shipped: the driver reads the public directory only (refused
if it holds a secret key). A worker that dies is retried by Ray; a shard that fails for good
raises :class:`ShardError` with its index. The command line is ``python -m
pimhe.distributed eval ...`` (docs/DISTRIBUTED.md).

``pimhe stats`` likewise (``pimhe.distributed.stats``, ``python -m pimhe.distributed stats``):
this process is the client, which holds the rows and the secret keys, encrypts one range of
users at a time and decrypts the result; workers add ranges up and combine partials.

Element-wise operations over a large ciphertext set (``batch_map``: multiply + relinearize,
rotate), streamed one shard per task.
"""

from ._cluster import ShardError, connect, shard_bounds
from ._batch import BatchResult, batch_map
from ._stats import StatsRunResult
from ._stats import run as stats
from ._study import EvalResult, evaluate

__all__ = ["BatchResult", "batch_map", "EvalResult", "ShardError", "StatsRunResult", "connect", "evaluate", "shard_bounds", "stats"]
