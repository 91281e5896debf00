"""``python -m neomx ...``: the ``neomx`` command (see neomx/cli.py)."""
import sys

from .cli import main

sys.exit(main())
