"""``python -m ego`` is the ``ego`` command."""

from ego.cli import main

main()
