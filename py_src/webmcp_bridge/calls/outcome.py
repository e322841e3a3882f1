"""A neutral end of a call: a feature (Propose mode's denial) raises a :class:`CallEnded` anywhere in a handler;
the registry, which knows no feature, returns its ``payload()`` as a successful result.
"""

from __future__ import annotations

from typing import Any


class CallEnded(Exception):
    """Ends the running call with ``payload()`` as its normal result; ``outcome`` (a word such as "denied", never
    an error code) is what the call hooks see."""

    outcome: str = "ended"

    def payload(self) -> dict[str, Any]:
        """The result's JSON payload (fitted under ``Limits.result_bytes``)."""
        return {"status": self.outcome, "message": str(self)}
