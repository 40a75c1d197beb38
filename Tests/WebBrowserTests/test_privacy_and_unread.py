"""The "Send read receipts" toggle and mark-unread."""

from conftest import settle


def test_privacy_toggle_hides_reads(open_as):
    alice = open_as("alice")
    bob = open_as("bob")
    toggle = bob.find('[data-testid="privacy-toggle"]')
    assert toggle.is_selected()
    toggle.click()
    settle(0.5)
    try:
        alice.open("dm-alice-bob")
        alice.send("Private reads?")
        alice.wait_receipt("Delivered")
        bob.open("dm-alice-bob")
        settle(1.5)
        assert alice.receipt() == "Delivered"
        # Bob's own unread count still knows he read it.
        bob.close()
        bob.wait(lambda: bob.unread_badge("dm-alice-bob") == "")
        alice.shot("privacy-alice-sees-delivered")
    finally:
        bob.find('[data-testid="privacy-toggle"]').click()
        settle(0.5)
    # Sharing again: the next read shows.
    alice.send("And now?")
    alice.wait_receipt("Delivered")
    bob.open("dm-alice-bob")
    alice.wait_receipt(lambda t: t.startswith("Read at"))


def test_mark_unread(open_as):
    alice = open_as("alice")
    bob = open_as("bob")
    alice.open("dm-alice-bob")
    alice.send("Unread test")
    bob.wait(lambda: bob.unread_badge("dm-alice-bob") not in ("", "●"))
    bob.open("dm-alice-bob")
    bob.find('[data-testid="mark-unread"]').click()
    bob.wait(lambda: bob.unread_badge("dm-alice-bob") != "")
    bob.shot("mark-unread")
    bob.open("dm-alice-bob")
    bob.close()
    bob.wait(lambda: bob.unread_badge("dm-alice-bob") == "")


def test_conversation_privacy_switch_hides_reads_in_that_conversation_only(open_as):
    alice = open_as("alice")
    bob = open_as("bob")
    bob.open("dm-alice-bob")
    toggle = bob.find('[data-testid="conversation-privacy-toggle"]')
    assert toggle.is_selected()
    toggle.click()
    settle(0.5)
    try:
        # Bob has the direct chat open: the new message is read at once, privately.
        alice.open("dm-alice-bob")
        alice.send("Private here?")
        settle(1.5)
        assert alice.receipt() == "Delivered"
        alice.shot("conversation-privacy-alice-sees-delivered")
        # Elsewhere Bob's reads still show.
        bob.open("trio")
        alice.open("trio")
        alice.send("And in the trio?")
        alice.wait_receipt(lambda t: t.startswith("Read"))
        # Another tab of Bob's sees the switch off in that conversation.
        bob_again = open_as("bob")
        bob_again.open("dm-alice-bob")
        assert not bob_again.find('[data-testid="conversation-privacy-toggle"]').is_selected()
    finally:
        bob.open("dm-alice-bob")
        bob.find('[data-testid="conversation-privacy-toggle"]').click()
        settle(0.5)
    # Sharing again in the conversation: the next read shows.
    alice.open("dm-alice-bob")
    alice.send("And now here?")
    alice.wait_receipt(lambda t: t.startswith("Read at"))
