"""The gateway's WebSocket protocol as JSON on the wire: the keys each command is answered with
(absent fields left out; JSONEncoder does not keep the keys' order), and the error push that
refuses a frame that is not a command, an unknown command, a missing field or a stranger. A raw
socket, opened from a page of the gateway's own origin (the only one it upgrades), without the app."""

import json
import time

import pytest

from conftest import BASE, TIMEOUT, new_driver

OPEN_SOCKET = """
const done = arguments[arguments.length - 1];
const socket = new WebSocket(`ws://${location.host}/ws`);
window.pushes = [];
window.socket = socket;
socket.onmessage = (event) => window.pushes.push(event.data);
socket.onopen = () => done(true);
socket.onerror = () => done(false);
"""

HELLO = {"type": "hello", "user": "alice", "timeZone": "UTC", "locale": "en-US", "prefersCounts": False}


class Socket:
    """One raw WebSocket session to the gateway, driven from a blank page of its origin."""

    def __init__(self, driver):
        self.driver = driver
        self.seen = 0
        assert driver.execute_async_script(OPEN_SOCKET), "the gateway refused the WebSocket"

    def send(self, frame):
        text = frame if isinstance(frame, str) else json.dumps(frame)
        self.driver.execute_script("window.socket.send(arguments[0])", text)

    def next(self, kinds=None, timeout=TIMEOUT):
        """The next push not read yet (of one of `kinds`, skipping others; with no kinds, any but
        `threads`, which the user's thread states push whenever they arrive), parsed."""
        deadline = time.monotonic() + timeout
        while True:
            pushes = self.driver.execute_script("return window.pushes")
            while self.seen < len(pushes):
                push = json.loads(pushes[self.seen])
                self.seen += 1
                if (kinds is None and push["type"] != "threads") or (kinds is not None and push["type"] in kinds):
                    return push
            if time.monotonic() > deadline:
                raise AssertionError(f"no push of {kinds} within {timeout} s; saw {pushes}")
            time.sleep(0.02)

    def ask(self, frame, kinds=None):
        self.send(frame)
        return self.next(kinds)

    def hello(self):
        """Says hello as Alice: the `init` push, once the badges of all her conversations came too
        (as her read state arrives: a push per conversation, or one with all)."""
        state = self.ask(HELLO)
        waiting = {conversation["id"] for conversation in state["conversations"]}
        while waiting:
            waiting -= {badge["conversation"] for badge in self.next(["unread"])["unread"]}
        return state


def keys(push):
    return set(push)


@pytest.fixture
def socket():
    driver = new_driver()
    try:
        driver.get(f"{BASE}/")
        yield Socket(driver)
    finally:
        driver.quit()


def test_hello_is_answered_with_the_state(socket):
    socket.send(HELLO)
    state = socket.next()
    assert keys(state) == {
        "type", "me", "users", "conversations", "messages", "statuses", "shareReads", "privateConversations"
    }
    assert state["type"] == "init" and state["me"] == "alice" and state["shareReads"] is True
    assert state["privateConversations"] == []
    assert keys(state["users"][0]) == {"id", "name", "deleted"}
    assert keys(state["conversations"][0]) == {"id", "title", "isGroup", "members"}
    assert keys(state["messages"][0]) == {"id", "conversation", "sender", "text", "isSystem", "sentAt"}
    unread = socket.next()
    assert keys(unread) == {"type", "unread"}
    assert keys(unread["unread"][0]) == {"conversation", "unread", "mentions", "markedUnread"}


def test_commands_are_answered_with_the_same_keys(socket):
    state = socket.hello()
    created = next(m for m in state["messages"] if m["conversation"] == "trio" and m["sender"] == "alice")
    detail = {"type": "readDetail", "conversation": "trio", "message": created["id"]}

    answer = socket.ask({**detail, "request": 7}, ["readDetail"])
    assert keys(answer) == {"type", "detail", "request"} and answer["request"] == 7
    assert keys(answer["detail"]) == {"conversation", "message", "read", "delivered", "notDelivered"}
    assert answer["detail"]["message"] == created["id"]
    # Without a request number, none is echoed.
    assert keys(socket.ask(detail, ["readDetail"])) == {"type", "detail"}

    # The toggle's default is sharing.
    assert socket.ask({"type": "privacy"}, ["privacy"]) == {"type": "privacy", "shareReads": True}
    # A conversation's own switch names it, both ways.
    private = {"type": "privacy", "conversation": "trio", "shareReads": False}
    assert socket.ask(private, ["privacy"]) == private
    assert socket.ask({**private, "shareReads": True}, ["privacy"]) == {**private, "shareReads": True}

    socket.send({"type": "send", "conversation": "dm-alice-bob", "text": " Protocol check "})
    # The gateway's own message push and receiptd's status update race: take them in either order.
    first = socket.next(["message", "status"])
    second = socket.next(["status"] if first["type"] == "message" else ["message"])
    message, status = (first, second) if first["type"] == "message" else (second, first)
    assert keys(message) == {"type", "message"}
    assert message["message"]["text"] == "Protocol check" and message["message"]["sender"] == "alice"
    assert keys(status) == {"type", "status"}
    # An unread message has no readAt: the key is left out, not null.
    assert keys(status["status"]) == {
        "conversation", "message", "status", "recipientCount", "deliveredCount", "readCount", "text"
    }

    # The sheet a page at a time: a trio message's two recipients on pages of one line, `next`
    # naming the cursor of the page after (the `after` of the next ask), left out on the last one.
    socket.send({"type": "send", "conversation": "trio", "text": "Paged"})
    paged = {**detail, "message": socket.next(["message"])["message"]["id"], "size": 1}
    first = socket.ask(paged, ["readDetail"])["detail"]
    assert keys(first) == {"conversation", "message", "read", "delivered", "notDelivered", "next"}, first
    second = socket.ask({**paged, "after": first["next"]}, ["readDetail"])["detail"]
    assert keys(second) == {"conversation", "message", "read", "delivered", "notDelivered"}, second
    users = [row["user"] for page in (first, second) for part in ("read", "delivered", "notDelivered")
             for row in page[part]]
    assert users == ["bob", "carol"]


def error(push):
    assert keys(push) == {"type", "error"} and push["type"] == "error", push
    return push["error"]


def test_strangers_are_refused(socket):
    assert error(socket.ask("not json")) == "not a command: not json"
    assert error(socket.ask({"user": "alice"})) == 'not a command: {"user": "alice"}'
    assert error(socket.ask({"type": "markUnread", "conversation": "team"})) == "say hello as an existing user first"
    assert error(socket.ask({"type": "hello", "user": "mallory"})) == "unknown user mallory"
    assert "user" in error(socket.ask({"type": "hello"}))


def test_bad_commands_are_refused(socket):
    state = socket.hello()
    assert "nonsense" in error(socket.ask({"type": "nonsense", "conversation": "team"}))
    assert error(socket.ask({"type": "send", "conversation": "team", "text": "  "})) == "send failed: empty message"
    assert error(socket.ask({"type": "send", "conversation": "team"})) == "send failed: empty message"
    assert error(socket.ask({"type": "delivered", "conversation": "nope", "message": "m1"})) == (
        "delivered failed: no such conversation of alice"
    )
    assert error(socket.ask({"type": "read", "conversation": "team", "message": "nope"})) == (
        "read failed: no such message in team"
    )
    created = next(m for m in state["messages"] if m["conversation"] == "trio" and m["sender"] == "alice")
    bad_cursor = {"type": "readDetail", "conversation": "trio", "message": created["id"], "after": "x"}
    refused_cursor = error(socket.ask(bad_cursor))
    assert refused_cursor.startswith("readDetail failed: ") and "is not a next_cursor" in refused_cursor
    # A required field left out: refused for that command.
    assert error(socket.ask({"type": "read", "conversation": "team"})).startswith("read failed: ")
    assert error(socket.ask({"type": "markUnread"})).startswith("markUnread failed: ")
    # A field of the wrong type is not a command at all.
    refused = error(socket.ask({"type": "privacy", "shareReads": "yes"}))
    assert refused.startswith("not a command: ")
    # A refused command leaves the session signed in.
    assert socket.ask({"type": "privacy"}, ["privacy", "error"])["type"] == "privacy"
