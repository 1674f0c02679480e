"""tests/browser: the shared helpers of tests/ (crawlrun) importable from here."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
