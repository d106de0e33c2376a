"""The catalog: what the learnings roots hold, read without a browser.

Finding sites (:mod:`.sites`), loading their tools (:mod:`.loading`) and checking a call's
args (:mod:`.args`), together :class:`~.registry.Learnings`; manifests and their schema
(:mod:`.manifest`), JSON Schema checks (:mod:`.schemas`, :mod:`.quickcheck`), paths kept
inside a site (:mod:`.paths`), URL matching (:mod:`.matching`), the rules names follow
(:mod:`.naming`), a tool's JavaScript read as text (:mod:`.jslint`), learning packs
(:mod:`.packs`, :mod:`.pack_build`), the domain index and change notification (:mod:`.index`,
:mod:`.watch`, :mod:`.freshness`) and what ``ego validate`` checks (:mod:`.validate`).

Nothing here drives a browser or replays a recording: the catalog imports nothing from
``ego.page``, ``ego.replay`` or ``ego.runtime`` (a contract in pyproject.toml).
"""
