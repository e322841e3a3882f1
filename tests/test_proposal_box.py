"""Propose mode's inline box (pure Python): the element tree ``lab/ui/proposals.py`` makes through dom.js in one
crossing. Real proposals, made by the tools over the in-memory host with script payloads in the sources, are
checked the way the person sees them: summary, each diff line, the buttons, the reason input, and no markup."""

from __future__ import annotations

import asyncio
from importlib import resources

from helpers import make_bridge
from test_panel_view import PAYLOADS, assert_safe
from webmcp_bridge.core.limits import PROPOSAL_REASON_BYTES
from webmcp_bridge.lab.ui.proposal_view import proposal_box
from webmcp_bridge.lab.ui.view import El
from webmcp_bridge.propose.proposals import Proposal


def _proposed(tool: str, args: dict) -> Proposal:
    """The proposal a real tool call makes in Propose mode (the call is cancelled once it waits)."""
    b = make_bridge({"demo/nb.ipynb": "notebook-running-code.ipynb"})
    b.open("demo/nb.ipynb")
    book = b.reg.context.proposals
    book.set_mode("propose")
    cells = b.ok("jupyter_get_cells", {"notebookPath": "demo/nb.ipynb", "startIndex": 0, "endIndex": 10})["cells"]
    cell = next(c for c in cells if c["type"] == "code")

    def fill(v):
        return (
            cell[v[1:]]
            if isinstance(v, str) and v.startswith("@")
            else [fill(x) for x in v]
            if isinstance(v, list)
            else v
        )

    args = {"notebookPath": "demo/nb.ipynb", **{k: fill(v) for k, v in args.items()}}

    async def scenario() -> Proposal:
        call = asyncio.ensure_future(b.reg.call(tool, args))
        while not book.waiting():
            assert not call.done(), call.result()  # the call must wait for the person, not end
            await asyncio.sleep(0)
        proposal = book.waiting()[0]
        call.cancel()
        return proposal

    return asyncio.run(scenario())


def _by_class(tree: El, cls: str) -> list[El]:
    return [e for e in tree.walk() if cls in e.cls.split()]


def test_an_update_box_shows_the_diff_line_by_line_with_payloads_as_text():
    source = "\n".join(PAYLOADS)
    proposal = _proposed(
        "jupyter_update_cell", {"cellId": "@id", "source": source, "expectedSourceHash": "@sourceHash"}
    )
    tree = proposal_box(proposal)
    assert_safe(tree)
    assert tree.cls == "webmcp-bridge-proposal"
    assert tree.attrs["data-proposal-id"] == proposal.id and tree.attrs["data-kind"] == "update"
    assert tree.attrs["data-tool"] == "jupyter_update_cell" and tree.attrs["data-cell-id"] == proposal.cell_id
    assert _by_class(tree, "webmcp-bridge-proposal-summary")[0].text == "Replace the cell's source"
    added = [e.text for e in _by_class(tree, "webmcp-bridge-diff-add")]
    assert added == [f"+ {p}" for p in PAYLOADS]  # every payload is text of its own line
    assert _by_class(tree, "webmcp-bridge-diff-del") and not _by_class(tree, "webmcp-bridge-proposal-code")
    accept, deny = (
        _by_class(tree, "webmcp-bridge-proposal-accept")[0],
        _by_class(tree, "webmcp-bridge-proposal-deny")[0],
    )
    assert (accept.tag, str(accept.text), accept.attrs["type"]) == ("button", "Accept", "button")
    assert (deny.tag, str(deny.text)) == ("button", "Deny")
    reason = _by_class(tree, "webmcp-bridge-proposal-reason")[0]
    assert (
        reason.tag == "input"
        and reason.attrs["maxlength"] == str(PROPOSAL_REASON_BYTES)
        and reason.attrs["type"] == "text"
    )


def test_a_run_box_shows_the_code_to_run():
    proposal = _proposed("jupyter_run_cells", {"cellIds": ["@id"]})
    tree = proposal_box(proposal)
    assert_safe(tree)
    assert proposal.code is not None and proposal.diff is None
    assert [str(e.text) for e in _by_class(tree, "webmcp-bridge-proposal-caption")] == ["Code to run:"]
    assert _by_class(tree, "webmcp-bridge-proposal-code")
    assert [e.text for e in _by_class(tree, "webmcp-bridge-diff-ctx")] == (proposal.code.splitlines() or [""])


def test_one_stylesheet_is_package_data_and_styles_both_views():
    css = resources.files("webmcp_bridge.lab.ui").joinpath("style.css").read_text(encoding="utf-8")
    for selector in (
        ".webmcp-bridge-proposal ",
        ".webmcp-bridge-diff-add",
        ".webmcp-bridge-panel ",
        ".webmcp-bridge-badge",
    ):
        assert selector in css


def test_invisible_characters_are_marked_and_flagged_and_accept_waits():
    """A run whose code holds a right-to-left override: the mark stands in its place (its own span), the box
    says how many there are, and Accept starts disabled beside "Show all"."""
    code = 'ok = "user\u202e # admin"\nprint(ok)\u200b'
    proposal = Proposal("p1", "nb.ipynb", "jupyter_run_code", "run_code", None, "Run code", code=code)
    tree = proposal_box(proposal)
    assert_safe(tree)
    lines = _by_class(tree, "webmcp-bridge-diff-line")
    assert [line.text_content() for line in lines] == ['ok = "user⟦U+202E⟧ # admin"', "print(ok)⟦U+200B⟧"]
    marks = _by_class(tree, "webmcp-bridge-invisible")
    assert [m.text for m in marks] == ["⟦U+202E⟧", "⟦U+200B⟧"]
    assert str(marks[0].attrs["title"]).startswith("U+202E RIGHT-TO-LEFT OVERRIDE")
    assert "\u202e" not in tree.text_content() and "\u200b" not in tree.text_content()
    assert tree.attrs["data-invisible"] == "2"
    assert str(_by_class(tree, "webmcp-bridge-proposal-flag")[0].text).startswith("Contains 2 invisible characters")
    assert "disabled" in _by_class(tree, "webmcp-bridge-proposal-accept")[0].attrs
    assert str(_by_class(tree, "webmcp-bridge-proposal-expand")[0].text) == "Show all 2 lines"


def test_a_box_without_invisible_characters_has_no_flag_and_a_box_without_listing_no_show_all():
    plain = proposal_box(Proposal("p2", "nb.ipynb", "jupyter_run_code", "run_code", None, "Run code", code="print(1)"))
    assert not _by_class(plain, "webmcp-bridge-proposal-flag") and plain.attrs["data-invisible"] == "0"
    move = proposal_box(Proposal("p3", "nb.ipynb", "jupyter_move_cell", "move", "c1", "Move this cell below cell c2"))
    assert "disabled" in _by_class(move, "webmcp-bridge-proposal-accept")[0].attrs  # until armed (ProposalView)
    assert not _by_class(move, "webmcp-bridge-proposal-expand") and not _by_class(move, "webmcp-bridge-proposal-hint")


def test_a_diff_counts_what_stays_and_marks_every_line():
    """Removed invisible characters are marked but not counted; a form feed stays inside its line."""
    diff = [["-", "x = 1\u2066"], ["+", "x = 2\x0cy = 3"], [" ", "z"]]
    tree = proposal_box(Proposal("p4", "nb.ipynb", "jupyter_update_cell", "update", "c1", "Replace", diff=diff))
    assert [e.text_content() for e in _by_class(tree, "webmcp-bridge-diff-line")] == [
        "- x = 1⟦U+2066⟧",
        "+ x = 2⟦U+000C⟧y = 3",
        "  z",
    ]
    assert tree.attrs["data-invisible"] == "1"
