"""The schema ids a batch of Confluent-framed records is prepared for, guessed from the batches before it.

A decode that reads each record with one ``from_avro`` per schema id must know the batch's ids before its pass, and a
job over the headers (:func:`~cdc_spark.decoding.confluent.batch_ids`) reads every message once more to find them. A
stream names the same ids batch after batch, so the ids the last batch was prepared for are taken instead. A record
of an id outside the guess is not read in the JVM: it goes to the codec, as a record of an id the registry does not
give does. So a batch whose pass leaves a residue has its ids found after all, and where the guess lacked one, it is
prepared again for its own ids (``cdc_spark.decoding.jvm.batch``); a batch without a residue missed nothing.

A guess holds the ids of one batch, not of every batch before: ids a stream no longer writes (a table's earlier
schema versions) would otherwise cost each record a test, and the plans grow with them. A stream whose batches name
other ids each time (its tables take turns) would miss often, and a miss costs the batch a second pass: after a
miss, the next batches find their ids by the job, 1, 2, 4, ... up to :data:`MOST_WAIT` of them, before one guesses
again.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Final, Generic, TypeVar

import attrs

MOST_WAIT: Final = 64  # batches that find their ids by the job after a miss, at most
S = TypeVar("S")  # a writer schema


@attrs.frozen
class Guess(Generic[S]):
    """The ids a batch is prepared for: each role's writer schemas by id, and every id asked of the registry, those it
    did not give too (their records are the codec's either way); ``wait``: batches to find their ids before the next
    guess, ``backoff``: the wait the last miss set."""

    keys: Mapping[int, S]
    values: Mapping[int, S]
    tried_keys: frozenset[int]
    tried_values: frozenset[int]
    wait: int = 0
    backoff: int = 0

    def covers(self, key_ids: Set[int], value_ids: Set[int]) -> bool:
        """Whether a batch of these ids was read as if they had been found: each tried in its role."""
        return key_ids <= self.tried_keys and value_ids <= self.tried_values

    def after_miss(self, found: Guess[S]) -> Guess[S]:
        """The ids ``found`` where this guess missed, with the next batches waiting twice as long as the last miss
        made them (1 the first time, :data:`MOST_WAIT` at most)."""
        backoff = min(max(2 * self.backoff, 1), MOST_WAIT)
        return attrs.evolve(found, wait=backoff, backoff=backoff)

    def after_wait(self, found: Guess[S]) -> Guess[S]:
        """The ids ``found`` by a batch that waited: one batch fewer to wait."""
        return attrs.evolve(found, wait=max(self.wait - 1, 0), backoff=self.backoff)


def found(keys: Mapping[int, S], values: Mapping[int, S], key_ids: Set[int], value_ids: Set[int]) -> Guess[S]:
    """The guess of a batch whose ids were found (``key_ids``, ``value_ids``), of which the registry gave
    ``keys`` and ``values``."""
    return Guess(_in_order(keys), _in_order(values), frozenset(key_ids), frozenset(value_ids))


def _in_order(schemas: Mapping[int, S]) -> dict[int, S]:
    return dict(sorted(schemas.items()))


__all__ = ["MOST_WAIT", "Guess", "found"]
