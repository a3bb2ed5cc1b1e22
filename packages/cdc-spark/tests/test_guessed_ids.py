"""The schema ids a TiCDC Avro batch is prepared for when guessed from the batch before (pure Python: the decode's
use of them is in test_decode_equality.py)."""

from __future__ import annotations

from cdc_spark.decoding.guessed_ids import MOST_IDS, Guess, found


def test_a_guess_covers_each_role_by_the_ids_tried_in_it() -> None:
    # id 9 was asked of the registry and not given: a batch naming it is covered (its records are the codec's)
    guess = found({1: "k1"}, {2: "v2"}, {1}, {2, 9})
    assert guess.covers({1}, {2, 9}) and guess.covers(set(), {2})
    assert not guess.covers({2}, {2})  # a value id named by a key was not prepared as a key
    assert not guess.covers({1}, {3})


def test_joined_guesses_hold_both_in_id_order_up_to_the_limit() -> None:
    earlier = found({5: "k5"}, {7: "v7"}, {5}, {7, 8})
    joined = earlier.joined(found({1: "k1"}, {3: "v3"}, {1}, {3}))
    assert (list(joined.keys), list(joined.values)) == ([1, 5], [3, 7])
    assert joined.tried_values == {3, 7, 8} and joined.covers({1, 5}, {3, 7, 8})
    full = found({}, {i: str(i) for i in range(MOST_IDS)}, set(), set(range(MOST_IDS)))
    own = found({}, {MOST_IDS: "new"}, set(), {MOST_IDS})
    assert full.joined(own) == own  # past the limit the batch's own ids are the next guess
    assert isinstance(own, Guess)
