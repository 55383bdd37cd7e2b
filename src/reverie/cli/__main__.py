"""``python -m reverie.cli``: the same as the ``reverie`` command."""

import sys

from . import main

sys.exit(main())
