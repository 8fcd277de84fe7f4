"""``python -m engine.app``: the `cauldron` command."""

import sys

from engine.app.cli import main

sys.exit(main())
