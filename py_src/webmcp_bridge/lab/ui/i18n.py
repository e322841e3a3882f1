"""The person's side's words, for JupyterLab's translator (``ITranslator`` of ``@jupyterlab/translation``).

A view holds no finished sentence but a :class:`Msg`: the English msgid (placeholders ``%1``, ``%2`` ...) and its
arguments, which ``dom.js`` translates with the bundle of :data:`DOMAIN` (``trans.__``, ``trans._n``) when it makes
the node; without a language pack the English is shown. Arguments (text from the notebook or the agent, or messages)
are substituted as text, never parsed. Under CPython ``str(msg)`` gives the English, as the null translator would.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: the gettext domain of the bridge's messages: the labextension's name as JupyterLab normalises it
DOMAIN = "jupyterlab_webmcp_bridge"

_PLACEHOLDER = re.compile(r"%(\d+)")


@dataclass(frozen=True)
class Msg:
    """One message: ``msgid`` (English, ``%1``... for ``args``) and, for a count, ``plural`` and ``n`` (then
    ``%1`` is ``n`` and ``args`` are ``%2``..., as ``trans._n`` numbers them)."""

    msgid: str
    args: tuple[Text, ...] = ()
    plural: str | None = None
    n: int | None = None

    def __str__(self) -> str:
        """The English text (JupyterLab's ``Gettext.strfmt`` rules: ``%N`` replaced, ``%%`` a percent sign)."""
        template, values = self.msgid, [str(a) for a in self.args]
        if self.plural is not None and self.n is not None:
            template, values = (self.msgid if self.n == 1 else self.plural), [str(self.n), *values]
        text = dict(enumerate(values, 1))  # %N is the Nth value; a missing one reads "undefined", as in JS
        filled = _PLACEHOLDER.sub(lambda m: text.get(int(m.group(1)), "undefined"), template.replace("%%", "%% "))
        return filled.replace("%% ", "%")

    def to_json(self) -> dict[str, Any]:
        """``{msg, args, plural?, n?}``, the form ``dom.js`` (and the other halves) translate."""
        raw: dict[str, Any] = {"msg": self.msgid, "args": [to_json(a) for a in self.args]}
        if self.plural is not None:
            raw["plural"], raw["n"] = self.plural, self.n
        return raw


#: what a view may put where the person reads text: a plain string (text from the notebook or the agent, shown as
#: it is) or a message for the translator
Text = str | Msg


def _(msgid: str, *args: Text) -> Msg:
    """A message (``trans.__``): ``_("Comment on %1", label)``."""
    return Msg(msgid, tuple(args))


def _n(singular: str, plural: str, n: int, *args: Text) -> Msg:
    """A message that depends on a count (``trans._n``): ``_n("%1 open thread", "%1 open threads", 3)``; ``%1`` is
    ``n``, ``args`` are ``%2``..."""
    return Msg(singular, tuple(args), plural, n)


def to_json(value: Text) -> Any:
    """A text as the page takes it: a string as it is, a message as :meth:`Msg.to_json`."""
    return value.to_json() if isinstance(value, Msg) else value
