"""A site's offline cases (``tests/cases.json``): the format, judging a result, and running one
case against its recording.

- :mod:`.format`: the ``cases.json`` schema and loading (:func:`~.format.load_cases`).
- :mod:`.judge`: comparing a result or an error with the case's expectations.
- :mod:`.result`: :class:`~.result.CaseResult`, how one case went.
- :mod:`.replayed`: running one case in an isolated tab with its HAR replayed.
- :mod:`.verdict` and :mod:`.gate`: the save gate, which runs a tool's cases against a new
  source before it is kept.

They sit in the learning layer, below the site, so that the site's save can run them; ``ego
test`` (:mod:`ego.casetests`, a front end) runs them through the site like any caller. The
package imports none of its modules itself: :mod:`.replayed` brings the replay layer in,
which a call that never runs a case does not pay for.
"""
