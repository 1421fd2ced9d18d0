"""Engine.warm_up for many questions collects start-up's garbage itself: a full collection over
everything start-up left (the index's rows, the model, the word tables) must not fall inside a
question's time (18F's eval: one of 155-180 ms)."""
from __future__ import annotations

import gc
import weakref


class _Cycle:
    def __init__(self):
        self.me = self


def test_garbage_older_than_the_warm_up_is_gone_after_it(engine):
    cycle = _Cycle()
    gc.collect()  # survives, to the oldest generation: only a full collection can free it
    gone = weakref.ref(cycle)
    del cycle
    assert gone() is not None  # left for a full collection, as start-up's garbage is
    engine.warm_up()
    assert gone() is None


def test_one_question_asks_warm_up_for_no_collection(engine, monkeypatch):
    """`citebot ask` answers one question: it pays for no full collection before it."""
    collected = []
    monkeypatch.setattr(gc, "collect", lambda *args: collected.append(args) or 0)
    engine.warm_up(many=False)
    assert not collected
