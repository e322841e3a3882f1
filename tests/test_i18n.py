"""The person's side's words go through JupyterLab's translator: every text a view shows is a message (an English
msgid with its arguments, lab/ui/i18n.py) or the notebook's and the agent's own text, never a sentence made in
Python; and a message reads in English as JupyterLab's translator without a language pack shows it."""

from __future__ import annotations

import re

from webmcp_bridge.calls.registry import CallEvent
from webmcp_bridge.changes.log import ChangeLog
from webmcp_bridge.changes.undo import EditJournal
from webmcp_bridge.host.protocol import CellChange
from webmcp_bridge.lab.ui.activity_view import ActivityRow, activity_item, call_row, change_row, edits_review
from webmcp_bridge.lab.ui.comments_view import Message, ThreadRow, comments_view
from webmcp_bridge.lab.ui.i18n import Msg, _, _n, to_json
from webmcp_bridge.lab.ui.proposal_view import proposal_box, workspace_corner
from webmcp_bridge.lab.ui.view import (
    CellInfo,
    El,
    KernelFacts,
    Markers,
    access_view,
    marker_badges,
    mode_note,
    mode_select,
)
from webmcp_bridge.propose.proposals import Proposal, source_diff

#: every piece of the notebook's or the agent's text in the trees below holds this, so it can be told from words
DATA = "DATA⟨x⟩"
#: what a view may show that is not a word: times, counts, a diff's or a code's marks, an invisible character's mark
#: (⟦U+202E⟧), a tool's name (the proposal box names it, as the agent called it)
NOT_WORDS = re.compile(r"[\d:\s×·.+\-…%()]*|⟦U\+[0-9A-F]+⟧|jupyter_[a-z_]+")
#: the attributes a person reads (or hears)
READ = ("title", "aria-label", "placeholder")


def test_a_message_reads_as_jupyterlabs_translator_shows_it_without_a_language_pack():
    assert str(_("Comment on %1 of %2", _("output %1", "2"), "cell 4")) == "Comment on output 2 of cell 4"
    assert str(_("100%% done")) == "100% done" and str(_("%2 and %1", "a", "b")) == "b and a"
    assert str(_n("%1 open thread", "%1 open threads", 1)) == "1 open thread"
    assert str(_n("Access (%2, %1 restricted cell)", "Access (%2, %1 restricted cells)", 3, "read")) == (
        "Access (read, 3 restricted cells)"
    )
    # the agent's text stays an argument: a %1 in it is never a placeholder
    assert str(_("Comment on %1", "%1 <b>")) == "Comment on %1 <b>"
    assert to_json(_("cell %1", "3")) == {"msg": "cell %1", "args": ["3"]}
    assert to_json(_n("%1 line", "%1 lines", 2)) == {"msg": "%1 line", "args": [], "plural": "%1 lines", "n": 2}
    assert to_json(DATA) == DATA


def trees() -> list[El]:
    cells = {f"c{i}": CellInfo(i, "code", f"x = {i}  # {DATA}", 1) for i in range(3)}
    log = ChangeLog()
    entries = log.ingest(DATA, [CellChange("agent", "edit", "c1", 10.0), CellChange("person", "run", "c2", 11.0)])
    journal = EditJournal()
    edit = journal.record(DATA, "c1", f"a = 1  # {DATA}", f"a = 2  # {DATA}")
    assert edit is not None
    thread = ThreadRow(
        "t1", "open", "orphaned", "range", "c1", (Message("agent", DATA, 1.0), Message("person", DATA)), quote=DATA
    )
    proposal = Proposal("p", DATA, "jupyter_update_cell", "update", "c1", DATA, diff=source_diff(DATA, DATA + "\u202e"))
    running = call_row(CallEvent(1, "jupyter_get_cells", DATA, 0.0))
    return [
        *[activity_item(change_row(e), cells, DATA) for e in entries],
        activity_item(running, cells, DATA, running.started + 75),
        activity_item(call_row(CallEvent(2, "site_tool", DATA, 0.0, 0.5, "ok")), None, None),
        activity_item(ActivityRow("k", 0.0, "person", _("commented on"), DATA, "c0"), cells, "other"),
        access_view(DATA, "read", [("c1", "none"), ("c2", "read")], cells, KernelFacts(True, True, 2, True)),
        marker_badges(Markers(2, "none", True, True, True), "c1", DATA),
        comments_view([thread], "all", {"open": 1, "all": 1}, cells, {"": DATA}, "c1", omitted=3),
        edits_review([edit], [source_diff(edit.before, edit.after)], _("cell %1", "2"), omitted=2),
        proposal_box(proposal),
        workspace_corner(),
        mode_select("propose"),
        mode_note(),
    ]


def test_every_word_the_views_show_goes_through_the_translator():
    plain = []
    for tree in trees():
        for el in tree.walk():
            texts = [el.text] + [el.attrs.get(name) for name in READ]
            for text in texts:
                if isinstance(text, str) and DATA not in text and not NOT_WORDS.fullmatch(text):
                    plain.append((el.tag, el.cls, text))
    assert plain == [], plain


def test_a_messages_arguments_are_the_only_place_for_the_notebooks_text():
    # a msgid is the bridge's own English: no notebook or agent text ever becomes one (it could be looked up, or
    # read as placeholders, by a translator)
    def msgids(value: object) -> list[str]:
        if isinstance(value, Msg):
            return [value.msgid, *(value.plural or "",), *[m for a in value.args for m in msgids(a)]]
        return []

    found = [m for tree in trees() for el in tree.walk() for v in [el.text, *el.attrs.values()] for m in msgids(v)]
    assert found and not [m for m in found if DATA in m or "jupyter_" in m]
