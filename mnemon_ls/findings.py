"""The shape of a health finding, shared by every Source's read-only ``diagnose`` and ``mnemon-ls doctor``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finding:
    """One doctor finding: ``level`` ``ok`` | ``warning`` | ``problem``, ``subject`` (a path or area),
    ``message`` (what and why), ``advice`` (what to do, or empty)."""

    level: str
    subject: str
    message: str
    advice: str = ""

    def to_dict(self) -> dict[str, str]:
        """``{level, subject, message, advice}``."""
        return {"level": self.level, "subject": self.subject, "message": self.message, "advice": self.advice}
