"""Seed 000's Testing Guide: the receipt text under the sender's last message, in a real browser
per user. A user's browser being open is "the app receives the message (background)"; opening
the conversation is "opens chat"."""

import re
from datetime import datetime
from zoneinfo import ZoneInfo

from conftest import retry, settle

BLUE = "rgba(0, 122, 255, 1)"


def test_one_on_one_chat(open_as):
    alice = open_as("alice", time_zone="America/New_York")
    alice.open("dm-alice-bob")
    # 1-2. Alice sends; Bob's app is closed: nothing under the message, a single ✓.
    message = alice.send("Hi Bob, are you there?")
    settle(0.5)
    assert alice.receipt() == ""
    assert alice.ticks(message)[:2] == ("✓", "sent")
    alice.shot("000-direct-1-sent")
    # 3-4. Bob's app receives it in the background: "Delivered", gray ✓✓.
    bob = open_as("bob")
    alice.wait_receipt("Delivered")
    assert alice.ticks(message)[:2] == ("✓✓", "delivered")
    assert alice.ticks(message)[2] != BLUE
    alice.shot("000-direct-2-delivered")
    # 5-6. Bob opens the chat: "Read at <time>" in Alice's time zone and locale, blue ✓✓.
    bob.open("dm-alice-bob")
    text = alice.wait_receipt(lambda t: t.startswith("Read at"))
    read_at = int(retry(lambda: alice.find('[data-testid="receipt"]').get_attribute("data-read-at")))
    local = datetime.fromtimestamp(read_at / 1000, ZoneInfo("America/New_York"))
    expected = local.strftime("%I:%M %p").lstrip("0")
    assert re.fullmatch(r"Read at \d{1,2}:\d{2} [AP]M", text), text
    assert text == f"Read at {expected}"
    assert alice.ticks(message) == ("✓✓", "read", BLUE)
    alice.shot("000-direct-3-read")
    # Only the last message from the current user carries the text; Bob (not the sender) sees none.
    second = alice.send("One more thing")
    alice.wait(lambda: alice.find('[data-testid="receipt"]').get_attribute("data-message") == second)
    assert len(alice.receipts()) == 1
    assert bob.receipts() == []


def test_group_chat(open_as):
    alice = open_as("alice")
    alice.open("club")  # Alice, Bob, Carol and Dave
    # 1-2. Alice sends to the group; nobody's app is open: nothing.
    message = alice.send("Book club on Friday?")
    settle(0.5)
    assert alice.receipt() == ""
    # 3-4. Everyone's app receives it: "Delivered" (only once all three have it).
    bob = open_as("bob")
    carol = open_as("carol")
    settle(0.5)
    assert alice.receipt() == ""
    dave = open_as("dave")
    alice.wait_receipt("Delivered")
    assert alice.ticks(message)[:2] == ("✓✓", "delivered")
    alice.shot("000-group-1-delivered")
    # 5-6. Bob opens the chat: "Read by some users".
    bob.open("club")
    alice.wait_receipt("Read by some users")
    assert alice.ticks(message) == ("✓✓", "read", BLUE)
    alice.shot("000-group-2-read-by-some")
    # 7-8. Carol and Dave open it: "Read by all users".
    carol.open("club")
    dave.open("club")
    alice.wait_receipt("Read by all users")
    alice.shot("000-group-3-read-by-all")
