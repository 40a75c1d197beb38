"""Seed 003's Test Procedure 1-8: the "Read By" sheet of one's own group messages."""

import time

from conftest import retry, settle


def test_1_and_5_sheet_of_own_message_updates_in_real_time(open_as):
    alice = open_as("alice")
    bob = open_as("bob")
    carol = open_as("carol")
    alice.open("trio")  # A, B, C
    message = alice.send("Who has seen this?")
    alice.wait_receipt("Delivered")
    alice.click_message(message)
    alice.wait(alice.sheet_open)
    alice.wait(lambda: alice.sheet_names("delivered-list") == ["Bob", "Carol"])
    assert alice.sheet_rows("read-list") == []
    alice.shot("003-1-sheet-delivered")
    # The sheet stays open; Bob reads; he moves to Read with a timestamp.
    bob.open("trio")
    alice.wait(lambda: alice.sheet_names("read-list") == ["Bob"])
    assert alice.sheet_rows("read-list") == [("Bob", "now")]
    assert alice.sheet_names("delivered-list") == ["Carol"]
    assert "Alice" not in alice.sheet_names("read-list") + alice.sheet_names("delivered-list")
    alice.shot("003-5-sheet-live-update")
    carol.open("trio")
    alice.wait(lambda: alice.sheet_names("read-list") == ["Carol", "Bob"])
    assert alice.sheet_names("delivered-list") == []


def test_2_no_sheet_for_others_messages(open_as):
    alice = open_as("alice")
    bob = open_as("bob")
    alice.open("trio")
    bob.open("trio")
    text = f"From Bob {time.time()}"
    message = bob.send(text)
    alice.wait(lambda: alice.find_all(f'#messages li[data-message="{message}"]'))
    alice.click_message(message)
    settle(0.5)
    assert not alice.sheet_open()


def test_3_read_section_most_recent_first(open_as):
    alice = open_as("alice")
    bob = open_as("bob")
    carol = open_as("carol")
    alice.open("trio")
    message = alice.send("Ordering check")
    alice.wait_receipt("Delivered")
    bob.open("trio")
    alice.wait_receipt("Read by some users")
    time.sleep(2.5)  # Carol reads later than Bob
    carol.open("trio")
    alice.wait_receipt("Read by all users")
    alice.click_message(message)
    alice.wait(lambda: alice.sheet_names("read-list") == ["Carol", "Bob"])
    times = retry(lambda: [int(e.get_attribute("data-time")) for e in alice.find_all('[data-testid="read-list"] [data-testid="row-time"]')])
    assert times[0] - times[1] >= 2000
    assert [t for _, t in alice.sheet_rows("read-list")] == ["now", "now"]
    alice.shot("003-3-read-most-recent-first")
    # The relative style of older reads, as the page formats them.
    fmt = "return window.receiptsWeb.formatRelative(Date.now() - arguments[0])"
    assert alice.driver.execute_script(fmt, 5 * 60 * 1000) == "5 minutes ago"
    assert alice.driver.execute_script(fmt, 60 * 60 * 1000) == "1 hour ago"
    assert alice.driver.execute_script(fmt, 26 * 60 * 60 * 1000) == "yesterday"
    assert alice.driver.execute_script(fmt, 2 * 24 * 60 * 60 * 1000) == "2 days ago"


def test_4_delivered_section_and_counts(open_as):
    alice = open_as("alice")
    others = {user: open_as(user) for user in ("bob", "carol", "dave", "erin")}
    alice.open("team")  # 5 participants
    message = alice.send("Team update")
    alice.wait_receipt("Delivered")
    others["bob"].open("team")
    others["carol"].open("team")
    alice.wait_receipt("Read by some users")
    alice.click_message(message)
    alice.wait(lambda: sorted(alice.sheet_names("read-list")) == ["Bob", "Carol"])
    assert sorted(alice.sheet_names("delivered-list")) == ["Dave", "Erin"]
    alice.shot("003-4-read-and-delivered")
    alice.find('[data-testid="close-sheet"]').click()
    # The counting style of seed 002: "✓✓ Read by 2 of 4" (four recipients).
    alice.find('[data-testid="counts-toggle"]').click()
    alice.wait(lambda: alice.driver.execute_script("return document.body.dataset.connection") == "online")
    alice.open("team")
    alice.wait_receipt("✓✓ Read by 2 of 4")
    alice.shot("002-read-by-2-of-4")
    alice.find('[data-testid="counts-toggle"]').click()


def test_6_no_sheet_for_system_messages(open_as):
    alice = open_as("alice")
    alice.open("team")
    system = '#messages [data-testid="system-message"]'
    assert "created the group" in retry(lambda: alice.find(system).text)
    retry(lambda: alice.find(system + ' [data-testid="bubble"]').click())
    settle(0.5)
    assert not alice.sheet_open()
    assert alice.find_all(system + ' [data-testid="receipt"]') == []


def test_7_direct_chat_keeps_simple_checkmarks(open_as):
    alice = open_as("alice")
    open_as("bob")
    alice.open("dm-alice-bob")
    message = alice.send("Direct chat, no sheet")
    alice.wait_receipt("Delivered")
    assert alice.ticks(message)[:2] == ("✓✓", "delivered")
    alice.click_message(message)
    settle(0.5)
    assert not alice.sheet_open()


def test_8_offline_read_syncs_on_reconnect(open_as):
    alice = open_as("alice")
    bob = open_as("bob")
    open_as("carol")
    alice.open("trio")
    message = alice.send("Read me on the train")
    alice.wait_receipt("Delivered")
    # Bob goes offline and reads: queued on his device.
    bob.set_offline(True)
    bob.open("trio")
    read_on_device = int(bob.driver.execute_script("return Date.now()"))
    assert bob.driver.execute_script("return document.body.dataset.pendingReads") == "1"
    bob.shot("003-8-bob-offline-reading")
    settle(1.5)
    assert alice.receipt() == "Delivered"
    alice.shot("003-8-alice-before-sync")
    time.sleep(1.0)
    reconnected = int(bob.driver.execute_script("return Date.now()"))
    bob.set_offline(False)
    alice.wait_receipt("Read by some users")
    alice.click_message(message)
    alice.wait(lambda: alice.sheet_names("read-list") == ["Bob"])
    read_at = int(retry(lambda: alice.find('[data-testid="read-list"] [data-testid="row-time"]').get_attribute("data-time")))
    # The read carries the device's time, not the time it reached the server.
    assert read_on_device - 1000 <= read_at < reconnected, (read_on_device, read_at, reconnected)
    assert bob.driver.execute_script("return document.body.dataset.pendingReads") == "0"
    alice.shot("003-8-alice-after-sync")
