"""Seed 003's edge case: a deleted account shows as "Deleted User" in the "Read By" sheet.
Runs last: the deletion is permanent for the run."""


def test_deleted_user_in_sheet(open_as):
    alice = open_as("alice")
    users = {user: open_as(user) for user in ("bob", "carol", "dave", "erin")}
    alice.open("team")
    message = alice.send("Goodbye Erin")
    alice.wait_receipt("Delivered")
    users["erin"].open("team")
    alice.wait_receipt("Read by some users")
    users["erin"].find('[data-testid="delete-account"]').click()
    alice.click_message(message)
    alice.wait(lambda: alice.sheet_names("read-list") == ["Deleted User"])
    assert "Erin" not in alice.sheet_names("delivered-list")
    alice.shot("003-deleted-user")
