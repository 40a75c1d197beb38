"""Issue 23: the "Read By" sheet of a big group comes a page (20 lines) at a time. Alice writes to
"Town Hall" (she and 24 guests); the guests read one after the other through raw WebSocket
sessions (the gateway's own protocol, one tab each), so the sheet needs two pages."""

import time

import pytest

from conftest import BASE, css, new_driver, retry

PAGE = 20  # the gateway's page size (Gateway.readDetailPageSize)

# One guest's tab: says hello, reads (or only receives) the message, and ends once the gateway
# pushed the guest's badge of the conversation at 0 (the read applied) or, for a delivery, once
# the frame is sent.
GUEST = """
const [user, conversation, message, kind, done] = arguments;
const socket = new WebSocket(`ws://${location.host}/ws`);
const finish = (result) => { clearTimeout(timer); socket.close(); done(result); };
const timer = setTimeout(() => finish("timed out"), 10000);
socket.onopen = () => socket.send(JSON.stringify({ type: "hello", user }));
socket.onmessage = (event) => {
  const push = JSON.parse(event.data);
  if (push.type === "init") {
    socket.send(JSON.stringify({ type: kind, conversation, message }));
    if (kind === "delivered") setTimeout(() => finish("delivered"), 200);
  }
  if (push.type === "unread" && push.unread.some((u) => u.conversation === conversation && u.unread === 0)) {
    if (kind === "read") finish("read");
  }
  if (push.type === "error") finish(push.error);
};
"""


def guest(number):
    return f"guest{number:02}", f"Guest {number:02}"


@pytest.fixture
def guests():
    """A blank page of the gateway's origin to run the guests' sessions from."""
    driver = new_driver()
    try:
        driver.get(f"{BASE}/")
        driver.set_script_timeout(15)
        yield lambda user, message, kind: driver.execute_async_script(GUEST, user, "townhall", message, kind)
    finally:
        driver.quit()


def read_times(page):
    return retry(lambda: [
        int(e.get_attribute("data-time")) for e in page.find_all(f'{css("read-list")} {css("row-time")}')
    ])


def more_button_shown(page):
    return retry(lambda: page.find(css("read-by-more")).is_displayed())


def test_sheet_pages_most_recent_reader_first(open_as, guests):
    alice = open_as("alice")
    alice.open("townhall")
    message = alice.send(f"Town hall at {time.time()}")
    # Guests 01 to 22 read in this order, 23 only receives it, 24 has not got it.
    for number in range(1, 23):
        assert guests(guest(number)[0], message, "read") == "read"
        time.sleep(0.005)  # distinct read times
    assert guests(guest(23)[0], message, "delivered") == "delivered"
    readers = [guest(number)[1] for number in range(22, 0, -1)]  # most recent first

    alice.click_message(message)
    alice.wait(alice.sheet_open)
    # The first page: the 20 most recent readers, and a way to more.
    alice.wait(lambda: alice.sheet_names("read-list") == readers[:PAGE],
               message=f"first page: {alice.sheet_names('read-list')}")
    assert alice.sheet_names("delivered-list") == [] and alice.sheet_names("not-delivered-list") == []
    assert alice.find_all("#sheet li.empty") == [], "no 'Nobody' while more pages come"
    assert more_button_shown(alice)
    alice.shot("23-read-by-first-page")

    # The next page: the two first readers, then who has it delivered, then who does not.
    alice.find(css("read-by-more")).click()
    alice.wait(lambda: alice.sheet_names("not-delivered-list") == [guest(24)[1]])
    assert alice.sheet_names("read-list") == readers
    assert alice.sheet_names("delivered-list") == [guest(23)[1]]
    assert not more_button_shown(alice)
    times = read_times(alice)
    assert times == sorted(times, reverse=True) and len(set(times)) == len(times), times
    shown = [name for section in ("read-list", "delivered-list", "not-delivered-list")
             for name in alice.sheet_names(section)]
    assert len(shown) == len(set(shown)) == 24
    alice.shot("23-read-by-second-page")

    # A read while both pages show: the sheet shows it on top, every line once.
    assert guests(guest(24)[0], message, "read") == "read"
    alice.wait(lambda: alice.sheet_names("read-list") == [guest(24)[1]] + readers)
    assert alice.sheet_names("delivered-list") == [guest(23)[1]]
    assert alice.sheet_names("not-delivered-list") == []
    assert not alice.find(css("not-delivered-section")).is_displayed()
    assert not more_button_shown(alice)
    alice.shot("23-read-by-live-after-pages")
