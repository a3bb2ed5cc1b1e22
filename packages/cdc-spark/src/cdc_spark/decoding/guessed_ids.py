"""The schema ids a batch of Confluent-framed records is prepared for, guessed from the batches before it.

A decode that reads each record with one ``from_avro`` per schema id must know the batch's ids before its pass, and a
job over the headers (:func:`~cdc_spark.decoding.confluent.batch_ids`) reads every message once more to find them. A
stream names the same ids batch after batch, so the ids the last batch was prepared for are taken instead. A record
of an id outside the guess is not read in the JVM: it goes to the codec, as a record of an id the registry does not
give does. So a batch whose pass leaves a residue has its ids found after all, and where the guess lacked one, it is
prepared again for the guess and its own ids (``cdc_spark.decoding.jvm.batch``); a batch without a residue missed
nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Final, Generic, TypeVar

import attrs

# The ids of each role (key, value) a guess holds at most: past that, a batch's own ids are the next guess. Streams
# whose batches take turns among a few tables keep one guess for all of them; each id costs every record a test.
MOST_IDS: Final = 64

S = TypeVar("S")  # a writer schema


@attrs.frozen
class Guess(Generic[S]):
    """The ids a batch is prepared for: each role's writer schemas by id, and every id asked of the registry, those it
    did not give too (their records are the codec's either way)."""

    keys: Mapping[int, S]
    values: Mapping[int, S]
    tried_keys: frozenset[int]
    tried_values: frozenset[int]

    def covers(self, key_ids: Set[int], value_ids: Set[int]) -> bool:
        """Whether a batch of these ids was read as if they had been found: each tried in its role."""
        return key_ids <= self.tried_keys and value_ids <= self.tried_values

    def joined(self, found: Guess[S]) -> Guess[S]:
        """The ids of both, in id order; ``found``'s alone where a role would hold more than :data:`MOST_IDS`."""
        if len(self.tried_keys | found.tried_keys) > MOST_IDS or len(self.tried_values | found.tried_values) > MOST_IDS:
            return found
        return Guess(
            _in_order({**self.keys, **found.keys}),
            _in_order({**self.values, **found.values}),
            self.tried_keys | found.tried_keys,
            self.tried_values | found.tried_values,
        )


def found(keys: Mapping[int, S], values: Mapping[int, S], key_ids: Set[int], value_ids: Set[int]) -> Guess[S]:
    """The guess of a batch whose ids were found (``key_ids``, ``value_ids``), of which the registry gave
    ``keys`` and ``values``."""
    return Guess(_in_order(keys), _in_order(values), frozenset(key_ids), frozenset(value_ids))


def _in_order(schemas: Mapping[int, S]) -> dict[int, S]:
    return dict(sorted(schemas.items()))


__all__ = ["MOST_IDS", "Guess", "found"]
