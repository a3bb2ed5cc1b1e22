"""The schema ids a TiCDC Avro batch is prepared for when guessed from the batch before (pure Python: the decode's
use of them is in test_decode_equality.py)."""

from __future__ import annotations

from cdc_spark.decoding.guessed_ids import MOST_WAIT, found


def test_a_guess_covers_each_role_by_the_ids_tried_in_it() -> None:
    # id 9 was asked of the registry and not given: a batch naming it is covered (its records are the codec's)
    guess = found({1: "k1"}, {2: "v2"}, {1}, {2, 9})
    assert guess.covers({1}, {2, 9}) and guess.covers(set(), {2})
    assert not guess.covers({2}, {2})  # a value id named by a key was not prepared as a key
    assert not guess.covers({1}, {3})


def test_each_miss_makes_the_batches_after_it_wait_twice_as_long_up_to_the_most() -> None:
    guess = found({5: "k5"}, {7: "v7"}, {5}, {7})
    waits = []
    for _ in range(9):
        guess = guess.after_miss(found({}, {3: "v3"}, set(), {3}))
        waits.append(guess.wait)
    assert waits == [1, 2, 4, 8, 16, 32, 64, 64, 64] and MOST_WAIT == 64
    assert (list(guess.keys), list(guess.values)) == ([], [3])  # the batch's own ids, not the missed guess's
    waited = guess.after_wait(found({}, {3: "v3", 4: "v4"}, set(), {3, 4}))
    assert (waited.wait, waited.backoff, list(waited.values)) == (63, 64, [3, 4])
