"""lab/server_root.py's decisions over a stand-in request (the page's fetch is exercised by
playwright-tests/test_lab_server.py against a real server with symbolic links): what it asks and with which
headers, what an answer means, and that every failure refuses the path rather than guessing it is inside."""

from __future__ import annotations

import asyncio
import json

import pytest

from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.lab.server_root import ServerRoot


class Server:
    """A stand-in for the request: records each (url, headers, body) and answers (status, text)."""

    def __init__(self, status: int = 200, text: str = '{"outside": []}', fail: Exception | None = None) -> None:
        self.status, self.text, self.fail = status, text, fail
        self.asked: list[tuple[str, dict[str, str], dict]] = []

    async def post(self, url: str, headers: dict[str, str], body: str) -> tuple[int, str]:
        self.asked.append((url, headers, json.loads(body)))
        if self.fail is not None:
            raise self.fail
        return self.status, self.text


def cookies(jar: dict[str, str]):
    return lambda name: jar.get(name)


def test_without_the_server_extension_nothing_is_asked():
    server = Server()
    root = ServerRoot(None, "tok", cookies({"_xsrf": "x"}), server.post)
    assert asyncio.run(root.outside(["a.txt"])) == set()
    asyncio.run(root.check("a.txt"))
    assert server.asked == []


def test_the_request_carries_the_token_and_the_xsrf_cookie_and_its_answer_is_the_outside_paths():
    server = Server(text=json.dumps({"outside": ["escape.txt"]}))
    root = ServerRoot("/base/outside", "tok", cookies({"_xsrf": "2|ab"}), server.post)
    assert asyncio.run(root.outside(["escape.txt", "inside.txt"])) == {"escape.txt"}
    url, headers, body = server.asked[0]
    assert url == "/base/outside" and body == {"paths": ["escape.txt", "inside.txt"]}
    assert headers == {"Content-Type": "application/json", "Authorization": "token tok", "X-XSRFToken": "2|ab"}
    with pytest.raises(ToolError) as refused:
        asyncio.run(root.check("escape.txt"))
    assert refused.value.code is ErrorCode.INVALID_PATH and "leads outside the workspace" in refused.value.message
    asyncio.run(root.check("inside.txt"))
    asyncio.run(root.check(""))  # the root itself: nothing asked
    assert len(server.asked) == 3


def test_no_token_and_no_cookie_send_neither_header():
    server = Server()
    asyncio.run(ServerRoot("/o", None, cookies({}), server.post).outside(["a"]))
    assert server.asked[0][1] == {"Content-Type": "application/json"}


@pytest.mark.parametrize(
    "server",
    [Server(status=403, text="forbidden"), Server(text="not json"), Server(text="{}"), Server(fail=OSError("down"))],
    ids=["http-403", "not-json", "no-outside-key", "request-failed"],
)
def test_a_server_that_cannot_answer_refuses_the_first_path(server):
    root = ServerRoot("/o", None, cookies({}), server.post)
    with pytest.raises(ToolError) as refused:
        asyncio.run(root.outside(["first.txt", "second.txt"]))
    assert refused.value.code is ErrorCode.INVALID_PATH
    assert refused.value.details["path"] == "first.txt" and "nothing was done" in refused.value.message
