"""``python -m ditto`` runs the command line."""

from .cli import main

main()
