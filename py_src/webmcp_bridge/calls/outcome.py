"""A neutral end of a call: how a feature ends a tool call with a normal (non-error) result.

The registry (:mod:`webmcp_bridge.calls.registry`) knows no feature. A feature that must stop a call on a
decision that is not a failure of the tool (Propose mode's denial,
:class:`webmcp_bridge.propose.proposals.ProposalDenied`) raises a subclass of :class:`CallEnded` from anywhere inside
the handler; the registry catches it and returns its ``payload()`` as a successful result (``isError: false``), with
``outcome`` as the hooks' outcome.
"""

from __future__ import annotations

from typing import Any


class CallEnded(Exception):
    """Ends the running call with ``payload()`` as its normal result.

    Subclasses override :meth:`payload`; ``outcome`` (a short word such as "denied", never an error code)
    is what :class:`~webmcp_bridge.calls.registry.CallEvent` hooks see as the call's outcome.
    """

    outcome: str = "ended"

    def payload(self) -> dict[str, Any]:
        """The JSON payload of the result (a dict; the registry fits it under ``Limits.result_bytes``)."""
        return {"status": self.outcome, "message": str(self)}
