"""The time from a reader's click to the sender's screen showing "Read", over N reads."""

import os

from conftest import ARTIFACTS, retry

N = int(os.environ.get("READ_LATENCY_N", "30"))


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def test_click_to_read_on_senders_screen(open_as, capsys):
    alice = open_as("alice")
    bob = open_as("bob")
    alice.open("dm-alice-bob")
    samples = []
    for i in range(N):
        alice.send(f"latency {i}")
        alice.wait_receipt("Delivered")
        bob.open("dm-alice-bob")  # the click: the page stamps document.body.dataset.openedAt
        alice.wait_receipt(lambda t: t.startswith("Read at"))
        clicked = float(bob.driver.execute_script("return document.body.dataset.openedAt"))
        shown = float(retry(lambda: alice.find('[data-testid="receipt"]').get_attribute("data-changed-at")))
        samples.append(shown - clicked)
        bob.close()
    p50, p99 = percentile(samples, 50), percentile(samples, 99)
    line = f"read-to-screen latency over {N} reads: p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(samples):.1f} ms"
    os.makedirs(ARTIFACTS, exist_ok=True)
    with open(os.path.join(ARTIFACTS, "latency.txt"), "w") as out:
        out.write(line + "\n" + " ".join(f"{s:.1f}" for s in samples) + "\n")
    with capsys.disabled():
        print("\n" + line)
    assert p50 < 100, line  # seed 001: under 100 ms
