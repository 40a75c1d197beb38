"""Issue 23: a user's own read state on every device. Bob on a phone and on a laptop (two browsers
with their own profiles, two WebDriver sessions) and Alice sending: the badges of both devices
follow Bob's read-state topic, live, whichever device (or gateway) the read comes from."""

import pytest

from conftest import css, send_to_receiptd, settle

# Records what the page sends and receives on its socket from now on; a reload or a new socket
# loses `window.watch`, which `watched` reports.
WATCH = """
const socket = window.receiptsWeb.state.socket;
window.watch = { socket, sent: [], pushes: [] };
const send = socket.send.bind(socket);
socket.send = (data) => { window.watch.sent.push(JSON.parse(data)); send(data); };
socket.addEventListener("message", (event) => window.watch.pushes.push(JSON.parse(event.data)));
"""

WATCHED = """
const watch = window.watch;
if (!watch) return null;
return { sameSocket: window.receiptsWeb.state.socket === watch.socket, sent: watch.sent, pushes: watch.pushes };
"""


def watch(device):
    device.driver.execute_script(WATCH)


def quiet_since_watch(device):
    """The badges the device was pushed since `watch`, checking that it is the same page on the
    same socket and sent nothing meanwhile (no read, no reload, no request)."""
    seen = device.driver.execute_script(WATCHED)
    assert seen is not None, f"{device.user}'s page was reloaded"
    assert seen["sameSocket"], f"{device.user}'s page reconnected"
    assert seen["sent"] == [], f"{device.user}'s page sent {seen['sent']}"
    return [badge for push in seen["pushes"] if push["type"] == "unread" for badge in push["unread"]]


def wait_badges(devices, expected):
    """Waits until every device shows the badge texts `expected` ({conversation: text})."""
    for device in devices:
        device.wait(
            lambda: {c: device.unread_badge(c) for c in expected} == expected,
            message=f"{device.user}: badges {expected}, saw { {c: device.unread_badge(c) for c in expected} }",
        )


@pytest.fixture
def bob_and_alice(open_as):
    """Bob's phone and laptop, with nothing unread from Alice (the phone read it), and Alice."""
    phone = open_as("bob")
    laptop = open_as("bob")
    alice = open_as("alice")
    conversations = ("dm-alice-bob", "trio")
    for conversation in conversations:
        phone.open(conversation)
    phone.close()
    wait_badges((phone, laptop), {c: "" for c in conversations})
    return phone, laptop, alice


def test_a_read_on_one_device_clears_the_badge_on_the_other(bob_and_alice):
    phone, laptop, alice = bob_and_alice
    devices = (phone, laptop)
    alice.open("dm-alice-bob")
    alice.send("Are you there?")
    alice.send("Hello?")
    alice.open("trio")
    alice.send("Trio news")
    wait_badges(devices, {"dm-alice-bob": "2", "trio": "1"})
    laptop.shot("devices-laptop-before")

    # The phone reads the direct chat: the laptop's badge goes, pushed, with nothing asked.
    watch(laptop)
    phone.open("dm-alice-bob")
    wait_badges([laptop], {"dm-alice-bob": "", "trio": "1"})
    assert {"conversation": "dm-alice-bob", "unread": 0, "mentions": 0, "markedUnread": False} in quiet_since_watch(laptop)
    laptop.shot("devices-laptop-after-phone-read")

    # Mark unread on the phone shows on the laptop.
    phone.find(css("mark-unread")).click()
    wait_badges(devices, {"dm-alice-bob": "●", "trio": "1"})
    assert {"conversation": "dm-alice-bob", "unread": 0, "mentions": 0, "markedUnread": True} in quiet_since_watch(laptop)
    laptop.shot("devices-laptop-marked-unread")

    # And the other way round: the laptop reads the trio, the phone's badge goes.
    watch(phone)
    laptop.open("trio")
    wait_badges([phone], {"dm-alice-bob": "●", "trio": ""})
    quiet_since_watch(phone)


def test_a_read_through_another_gateway_clears_the_badges(bob_and_alice):
    """The read never reaches this gateway: only Bob's read-state topic can tell it."""
    phone, laptop, alice = bob_and_alice
    devices = (phone, laptop)
    alice.open("dm-alice-bob")
    message = alice.send("Read me anywhere")
    wait_badges(devices, {"dm-alice-bob": "1"})
    for device in devices:
        watch(device)
    send_to_receiptd("read", conversation="dm-alice-bob", user="bob", message=message)
    wait_badges(devices, {"dm-alice-bob": ""})
    for device in devices:
        quiet_since_watch(device)
    alice.wait_receipt(lambda text: text.startswith("Read"))


def test_a_private_read_clears_the_other_device_only_for_bob(bob_and_alice):
    phone, laptop, alice = bob_and_alice
    devices = (phone, laptop)
    phone.open("dm-alice-bob")
    phone.find(css("conversation-privacy-toggle")).click()
    phone.close()
    settle(0.5)
    try:
        alice.open("dm-alice-bob")
        alice.send("Just between us")
        wait_badges(devices, {"dm-alice-bob": "1"})
        watch(laptop)
        phone.open("dm-alice-bob")
        wait_badges([laptop], {"dm-alice-bob": ""})
        quiet_since_watch(laptop)
        # Bob's devices know he read it; Alice does not.
        settle(1.5)
        assert alice.receipt() == "Delivered"
    finally:
        phone.open("dm-alice-bob")
        toggle = phone.find(css("conversation-privacy-toggle"))
        if not toggle.is_selected():
            toggle.click()
        settle(0.5)


def test_leaving_clears_the_badge(open_as):
    guest = open_as("guest20")
    alice = open_as("alice")
    alice.open("townhall")
    alice.send("Who is still here?")
    wait_badges([guest], {"townhall": "1"})
    watch(guest)
    try:
        # Removed from the group elsewhere: the conversation's badge goes.
        send_to_receiptd("leave", conversation="townhall", user="guest20")
        wait_badges([guest], {"townhall": ""})
        quiet_since_watch(guest)
        # New messages of a group one has left count for nothing.
        alice.send("Anyone?")
        settle(1.0)
        assert guest.unread_badge("townhall") == ""
    finally:
        send_to_receiptd("join", conversation="townhall", user="guest20")


def wait_mentions(devices, expected):
    """Waits until every device shows the mention badge texts `expected` ({conversation: text})."""
    for device in devices:
        device.wait(
            lambda: {c: device.mention_badge(c) for c in expected} == expected,
            message=f"{device.user}: mentions {expected}, saw { {c: device.mention_badge(c) for c in expected} }",
        )


def test_mentions_show_on_both_devices_and_a_read_on_one_clears_the_other(bob_and_alice):
    """Issue 31: Alice names Bob, then mentions everyone; both of Bob's devices show the mention
    badge; the phone reads the trio and the laptop's mention badge goes with its unread badge,
    pushed, with no reload."""
    phone, laptop, alice = bob_and_alice
    devices = (phone, laptop)
    alice.open("trio")
    alice.send("@bob can you look at this?")
    wait_mentions(devices, {"trio": "@1"})
    wait_badges(devices, {"trio": "1"})
    alice.send("Lunch @everyone")
    alice.send("@carol not you, Bob")
    wait_mentions(devices, {"trio": "@2"})
    wait_badges(devices, {"trio": "3"})
    laptop.shot("mentions-laptop-before")

    watch(laptop)
    phone.open("trio")
    wait_mentions([laptop], {"trio": ""})
    wait_badges([laptop], {"trio": ""})
    assert {"conversation": "trio", "unread": 0, "mentions": 0, "markedUnread": False} in quiet_since_watch(laptop)
    laptop.shot("mentions-laptop-after-phone-read")


def test_a_thread_read_on_one_device_clears_its_badge_on_the_other(bob_and_alice):
    """Issue 31: Bob replies in a thread on his phone (so he follows it); Alice replies twice,
    naming him once: his laptop shows the thread's badge under its root, and the replies do not
    count on the conversation's badge; the phone opens the thread and the laptop's thread badge
    goes, pushed, with no reload."""
    phone, laptop, alice = bob_and_alice
    alice.open("trio")
    root = alice.send("Lunch plans?")
    phone.open("trio")
    phone.open_thread(root)
    phone.send_reply("Pizza?")
    phone.close()
    alice.open_thread(root)
    alice.send_reply("@bob 12:30 works")
    alice.send_reply("Or 13:00")
    laptop.open("trio")
    laptop.wait(
        lambda: laptop.thread_badge(root) == "2 @1",
        message=f"bob's laptop: thread badge {laptop.thread_badge(root)!r}",
    )
    wait_badges([phone], {"trio": ""})
    laptop.shot("thread-laptop-before")

    watch(laptop)
    phone.open("trio")
    phone.open_thread(root)
    laptop.wait(
        lambda: laptop.thread_badge(root) == "",
        message=f"bob's laptop: thread badge {laptop.thread_badge(root)!r} after the phone read the thread",
    )
    seen = laptop.driver.execute_script(WATCHED)
    assert seen is not None and seen["sameSocket"], "the laptop's page reloaded or reconnected"
    pushes = [t for push in seen["pushes"] if push["type"] == "threads" for t in push["threads"]]
    assert {"conversation": "trio", "thread": root, "unread": 0, "mentions": 0, "following": True} in pushes
    laptop.shot("thread-laptop-after-phone-read")

