"""The pack gate lives in :mod:`mnemon_ls.packgate` (every command holds it, so it is not part of this package,
whose import the light commands skip); this name stays for the pack modules and older imports."""

from ..packgate import Gated, hold, run_held

__all__ = ["Gated", "hold", "run_held"]
