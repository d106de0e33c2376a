"""Learnings that know whether they still work: a record of every run, per tool version.

Every run of a learning tool, whatever front end made it, is recorded against the tool's
version hash: ``OK`` or the failure's kind, how long it took, when, and who ran it. The
record decides a tool's **health**, which ``learn_context``, ``ego tools``, ``ego sites``,
the MCP tools' descriptions and ``ego health`` show.

- :mod:`.origin`: which front end runs come from (a context variable each front end sets).
- :mod:`.outcomes`: a run's outcome, from the type of what it raised.
- :mod:`.recorder`: the call's side (one append) and the writer thread.
- :mod:`.store`: the SQLite file in ego's state folder.
- :mod:`.versions`: the version hash of current, kept and Python tools.
- :mod:`.view`: health as it is shown, ``suspect`` included.

docs/learning-loop.md describes the record, the health fields and ``suspect``. The package
imports none of its modules itself: a tool call loads the recorder, never the models that
show health.
"""
