"""The kernel's variables without the agent's code: jupyter_list_variables and jupyter_inspect_variable.

Both run the bridge's fixed inspection program (:mod:`webmcp_bridge.core.kernel_inspect`) in the kernel, silently
and outside its history. They are reads (allowed on a read-only notebook, not held in Propose mode), but the values
can carry what a hidden cell computed, so they follow the run rule (:mod:`webmcp_bridge.access.run_consent`): while
something is hidden the person sees the inspection first, in Direct mode too.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from webmcp_bridge.calls.payloads import Payload, Wire, sometimes
from webmcp_bridge.calls.registry import Annotations
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.kernel_inspect import check_variable_name, inspection_code, new_nonce, read_answer
from webmcp_bridge.core.limits import (
    MIN_PAGE_BYTES,
    RESULT_HEADROOM,
    VARIABLE_DETAIL_BYTES,
    VARIABLE_ITEMS,
    VARIABLE_REPR_BYTES,
    VARIABLES_LISTED,
    VARIABLES_LISTED_DEFAULT,
    VARIABLES_TIMEOUT_SECONDS,
)
from webmcp_bridge.propose.proposals import DeniedPayload
from webmcp_bridge.tools.common import CallContext, Id, Index, NotebookInput, tool
from webmcp_bridge.tools.payloads import model
from webmcp_bridge.tools.run import _kernel_ready


class ListVariablesInput(NotebookInput):
    offset: Index = Field(0, description="How many variables (in name order) to skip: a list's nextOffset.")
    limit: int = Field(VARIABLES_LISTED_DEFAULT, description="Most variables to return.", ge=1, le=VARIABLES_LISTED)


class InspectVariableInput(NotebookInput):
    name: Id = Field(description="The variable's name: a Python identifier (df, model_2), not an expression.")


class Variable(Wire):
    name: str
    type: str
    length: int = sometimes("The length of a str, bytes, list, tuple, dict, set or range.")
    shape: list[int] = sometimes("A numpy array's shape.")
    dtype: str = sometimes("A numpy array's dtype.")
    repr: str = Field(
        description="The repr of a builtin value (containers to a bound); for any other object <its type>: its own "
        "__repr__ is not run."
    )
    reprTruncated: bool


VariableList = model("VariableList", path=str, total=int, offset=int, variables=list[Variable], nextOffset=int | None)


class Item(Wire):
    key: str = sometimes("A dict item's key (its repr).")
    type: str
    repr: str


class Attribute(Wire):
    name: str
    type: str


class VariableDetails(Payload):
    path: str
    name: str
    defined: bool
    type: str = sometimes()
    length: int = sometimes()
    shape: list[int] = sometimes()
    dtype: str = sometimes()
    repr: str = sometimes()
    reprTruncated: bool = sometimes()
    ndim: int = sometimes()
    size: int = sometimes()
    nbytes: int = sometimes()
    items: list[Item] = sometimes("A container's first items.")
    signature: str = sometimes("A function's parameters (a plain or builtin function's only).")
    doc: str = sometimes("The first line of a function's docstring.")
    attributeCount: int = sometimes("An object's public instance attributes (its __dict__).")
    attributes: list[Attribute] = sometimes()


async def _inspect(ctx: CallContext, args: NotebookInput, tool: str, summary: str, arguments: dict) -> dict[str, Any]:
    """Run the inspection with ``arguments``; its answer with ``path``. Raises ToolError: the notebook's,
    KERNEL_UNAVAILABLE (no kernel or no readable answer in time), INTERNAL_ERROR; ProposalDenied."""
    nb = await ctx.notebook(args.notebook_path)
    nonce = new_nonce()
    budget = max(MIN_PAGE_BYTES, ctx.limits.result_bytes - RESULT_HEADROOM)  # what the program's answer may take
    program = inspection_code(nonce, {**arguments, "budget": budget, "repr": VARIABLE_REPR_BYTES})
    reason = await nb.run_consent()
    if reason is not None:  # the run rule: shown to the person (Direct mode too); a read is otherwise never held
        await ctx.propose(nb, tool, "run_code", None, f"{summary} ({reason})", code=program, always=True)
    await _kernel_ready(ctx, nb)
    run = await nb.inspect_kernel(program, VARIABLES_TIMEOUT_SECONDS, head_bytes=budget + 1024)
    if run.status == "timeout":
        raise ToolError(
            ErrorCode.KERNEL_UNAVAILABLE,
            f"The kernel did not answer within {VARIABLES_TIMEOUT_SECONDS:g} s: it is busy (a cell still running?). "
            "Call again once it is idle (jupyter_get_context shows its status).",
        )
    text = "".join(item.head for o in run.outputs if o.name == "stdout" for item in o.items if not item.binary)
    answer = read_answer(text, nonce)
    if answer is None:
        raise ToolError(
            ErrorCode.KERNEL_UNAVAILABLE,
            "The kernel gave no answer to the bridge's inspection"
            + (f" ({run.reason})." if run.reason else " (status " + repr(run.status) + ")."),
        )
    if "failed" in answer:
        raise ToolError(ErrorCode.INTERNAL_ERROR, "The bridge's inspection failed in the kernel; nothing was changed.")
    return {"path": nb.path, **answer}


async def list_variables(ctx: CallContext, args: ListVariablesInput) -> dict[str, Any]:
    """A page of the kernel's variables in name order (:class:`VariableList`); raises as :func:`_inspect`."""
    arguments = {"mode": "list", "offset": args.offset, "limit": args.limit}
    return await _inspect(ctx, args, "jupyter_list_variables", "Show the kernel's variables to the agent", arguments)


async def inspect_variable(ctx: CallContext, args: InspectVariableInput) -> dict[str, Any]:
    """One variable in detail (:class:`VariableDetails`); INVALID_ARGUMENT for a name that is not an identifier."""
    name = check_variable_name(args.name)
    arguments = {"mode": "inspect", "name": name, "detail": VARIABLE_DETAIL_BYTES, "items": VARIABLE_ITEMS}
    return await _inspect(
        ctx, args, "jupyter_inspect_variable", f"Show the kernel's variable {name} to the agent", arguments
    )


TOOLS = (
    tool(
        "jupyter_list_variables",
        "List the variables in the notebook's kernel, in name order: name, type, length or a numpy array's shape "
        "and dtype, a short repr of builtin values (other objects show their type: no code of theirs runs), paged "
        "with offset/limit. The bridge's own read-only inspection, outside the kernel's history. Modules and names "
        "starting with _ are not listed.",
        list_variables,
        Annotations.read(),
        VariableList | DeniedPayload,
        "List the kernel's variables",
    ),
    tool(
        "jupyter_inspect_variable",
        "One variable of the notebook's kernel in detail: type, bounded repr of a builtin value, length; a numpy "
        "array's shape and dtype; a container's first items; a function's signature; an object's attribute names. "
        "No code of the notebook's objects runs (a pandas object shows its type only). name is a Python identifier "
        "(no expressions); defined: false when there is none.",
        inspect_variable,
        Annotations.read(),
        VariableDetails | DeniedPayload,
        "Inspect a variable",
    ),
)
