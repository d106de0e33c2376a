"""What an agent is told about the catalog: ``learn_context``'s answer (:mod:`.context`, and
compact: :mod:`.compact`), a tool described, a note read, a site summarised with its tools'
health, and the catalog search (:mod:`.search`)."""
