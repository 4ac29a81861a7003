"""Attack (hole 3): exits 0 at import, before any manifest is written."""
import os

os._exit(0)
