"""``python -m coexist.cli``: the ``coexist`` command."""

import sys

from . import main

sys.exit(main())
