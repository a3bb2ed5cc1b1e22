"""``python -m cdc_core.cli`` runs the ``cdc`` command."""

import sys

from cdc_core.cli.main import main

sys.exit(main())
