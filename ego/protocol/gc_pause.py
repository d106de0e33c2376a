"""Python's cyclic garbage collector paused while a large answer is decoded or laid out.

Decoding a CDP answer of a few megabytes (the accessibility tree of a page of 6,000
elements: 9,000 nodes, 3.4 MB of JSON) makes hundreds of thousands of dicts and lists, and
every 700 new containers start a collection, some of them of every generation, which walks
every object alive. Measured on Chromium 156's tree of that page: ``orjson.loads`` took 98
to 213 ms with the collector running and 23 ms paused; a whole snapshot of a 200-row table
took 72 ms of Python with it and 43 ms without. What is made there holds no cycles that
must go at once, and the collector runs again as soon as the block ends.

What a block makes to keep (a listing of 10,000 sites: 600,000 containers) would still be
walked once as young objects when the collector runs again (0.3 s); with ``lasting`` it joins
the oldest generation at once (``gc.freeze`` then ``gc.unfreeze``), which a collection walks
only when it has grown by a quarter.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused(*, lasting: bool = False) -> Iterator[None]:
    """Pause the cyclic collector for the block (it stays off if it was off).

    Args:
        lasting: what the block makes outlives it: it is filed with the oldest objects when
            the block ends, not walked as new ones.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if lasting:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
