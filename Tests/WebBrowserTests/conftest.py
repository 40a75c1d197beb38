"""Shared fixtures: headless Chromium sessions signed in as demo users, and a page helper whose
every read is what the page shows (DOM text)."""

import json
import os
import subprocess
import time

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

BASE = os.environ.get("RECEIPTS_WEB_URL", "http://127.0.0.1:8080")
ARTIFACTS = os.environ.get("RECEIPTS_WEB_ARTIFACTS", os.path.join(os.path.dirname(__file__), "artifacts"))
TIMEOUT = 15
# The gateway's prefix of every id it gives receiptd, and where receiptd and receiptctl are (run.sh).
NAMESPACE = os.environ.get("RECEIPTS_WEB_NAMESPACE", "")
DATA_DIR = os.environ.get("RECEIPTD_DATA_DIR", "")
RECEIPTCTL = os.environ.get("RECEIPTCTL", "receiptctl")


def css(testid):
    return f'[data-testid="{testid}"]'


def retry(action, attempts=50):
    """Runs a read or a click again when the page re-rendered the element under it."""
    for attempt in range(attempts):
        try:
            return action()
        except StaleElementReferenceException:
            if attempt == attempts - 1:
                raise
            time.sleep(0.02)


def normalize(text):
    """The page's text with the narrow and no-break spaces that ICU puts in times made plain."""
    return text.replace("\u202f", " ").replace("\xa0", " ").strip()


class Page:
    """One browser tab signed in as one user."""

    def __init__(self, driver, user):
        self.driver = driver
        self.user = user

    # -- reading --

    def find(self, selector):
        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def find_all(self, selector):
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def wait(self, condition, timeout=TIMEOUT, message=""):
        waiter = WebDriverWait(
            self.driver,
            timeout,
            poll_frequency=0.02,
            ignored_exceptions=(StaleElementReferenceException, NoSuchElementException),
        )
        return waiter.until(lambda _: condition(), message)

    def _receipt(self):
        """The receipt text under the user's last sent message ("" when none shows)."""
        found = self.find_all(css("receipt"))
        return normalize(found[0].text) if found else ""

    def _receipts(self):
        return [normalize(e.text) for e in self.find_all(css("receipt"))]

    def wait_receipt(self, expected, timeout=TIMEOUT):
        check = expected if callable(expected) else (lambda text: text == expected)
        self.wait(lambda: check(self.receipt()), timeout, f"{self.user}: receipt {expected!r}, saw {self.receipt()!r}")
        return self.receipt()

    def message(self, message_id):
        return self.find(f'#messages li[data-message="{message_id}"]')

    def _ticks(self, message_id):
        element = self.message(message_id).find_element(By.CSS_SELECTOR, css("ticks"))
        return normalize(element.text), element.get_attribute("data-state"), element.value_of_css_property("color")

    def _unread_badge(self, conversation):
        return normalize(self.find(css(f"unread-{conversation}")).text)

    def _mention_badge(self, conversation):
        return normalize(self.find(css(f"mentions-{conversation}")).text)

    def _thread_badge(self, root):
        return normalize(self.find(css(f"thread-badge-{root}")).text)

    def _sheet_open(self):
        return self.find(css("read-by-sheet")).is_displayed()

    def _sheet_rows(self, section):
        """[(name, time text)] of a "Read By" section: read-list, delivered-list, not-delivered-list."""
        rows = self.find(css(section)).find_elements(By.CSS_SELECTOR, css("read-by-row"))
        return [
            (
                normalize(r.find_element(By.CSS_SELECTOR, css("row-name")).text),
                normalize(r.find_element(By.CSS_SELECTOR, css("row-time")).text),
            )
            for r in rows
        ]

    def sheet_names(self, section):
        return [name for name, _ in self.sheet_rows(section)]

    def receipt(self, *args):
        return retry(lambda: self._receipt(*args))

    def receipts(self, *args):
        return retry(lambda: self._receipts(*args))

    def ticks(self, *args):
        return retry(lambda: self._ticks(*args))

    def unread_badge(self, *args):
        return retry(lambda: self._unread_badge(*args))

    def mention_badge(self, *args):
        return retry(lambda: self._mention_badge(*args))

    def thread_badge(self, *args):
        return retry(lambda: self._thread_badge(*args))

    def sheet_open(self, *args):
        return retry(lambda: self._sheet_open(*args))

    def sheet_rows(self, *args):
        return retry(lambda: self._sheet_rows(*args))

    # -- doing --

    def open(self, conversation):
        retry(lambda: self.find(css(f"conversation-{conversation}")).click())
        self.wait(lambda: self.find(css("chat")).is_displayed())

    def close(self):
        self.find(css("close-chat")).click()
        self.wait(lambda: not self.find(css("chat")).is_displayed())

    def send(self, text):
        """Sends a message in the open conversation; returns its id once the gateway echoed it."""
        box = self.find(css("composer-input"))
        box.send_keys(text)
        selector = "#messages li.own"

        def matching():
            return [
                item.get_attribute("data-message")
                for item in self.find_all(selector)
                if item.find_element(By.CSS_SELECTOR, css("bubble")).text == text
            ]

        before = len(retry(matching))
        box.send_keys(Keys.ENTER)

        def echoed():
            found = matching()
            return found[-1] if len(found) > before else None

        return self.wait(echoed, message=f"{self.user}: message {text!r} not echoed")

    def open_thread(self, root):
        retry(lambda: self.find(css(f"thread-open-{root}")).click())
        self.wait(lambda: self.find(css("thread")).is_displayed())

    def send_reply(self, text):
        """Sends a reply in the open thread; returns its id once the gateway echoed it."""
        box = self.find(css("thread-composer-input"))
        box.send_keys(text)

        def matching():
            return [
                item.get_attribute("data-message")
                for item in self.find_all("#thread-messages li.own")
                if item.find_element(By.CSS_SELECTOR, ".bubble").text == text
            ]

        before = len(retry(matching))
        box.send_keys(Keys.ENTER)

        def echoed():
            found = matching()
            return found[-1] if len(found) > before else None

        return self.wait(echoed, message=f"{self.user}: reply {text!r} not echoed")

    def click_message(self, message_id):
        retry(lambda: self._click_message(message_id))

    def _click_message(self, message_id):
        self.message(message_id).find_element(By.CSS_SELECTOR, css("bubble")).click()

    def set_offline(self, offline):
        toggle = self.find(css("offline-toggle"))
        if toggle.is_selected() != offline:
            toggle.click()
        self.wait(lambda: self.driver.execute_script("return document.body.dataset.connection")
                  == ("offline" if offline else "online"))

    def shot(self, name):
        os.makedirs(ARTIFACTS, exist_ok=True)
        path = os.path.join(ARTIFACTS, f"{name}.png")
        self.driver.save_screenshot(path)
        return path


def new_driver():
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1000,720",
                     "--disable-gpu", "--lang=en-US"):
        options.add_argument(argument)
    if os.path.exists("/usr/bin/chromium"):
        options.binary_location = "/usr/bin/chromium"
    service = Service(executable_path="/usr/bin/chromedriver") if os.path.exists("/usr/bin/chromedriver") else Service()
    return webdriver.Chrome(options=options, service=service)


@pytest.fixture
def open_as():
    """open_as("alice", time_zone="America/New_York") -> Page, online; all closed after the test."""
    drivers = []

    def make(user, time_zone=None):
        driver = new_driver()
        drivers.append(driver)
        if time_zone:
            driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": time_zone})
        driver.get(f"{BASE}/?user={user}")
        page = Page(driver, user)
        page.wait(lambda: driver.execute_script("return document.body.dataset.connection") == "online",
                  message=f"{user} did not connect")
        return page

    yield make
    for driver in drivers:
        try:
            driver.quit()
        except Exception:  # noqa: BLE001 - a crashed browser must not hide the test's own result
            pass


def send_to_receiptd(kind, **ids):
    """Sends one event straight to receiptd, as a device on another gateway would: this gateway
    hears of it only through what receiptd publishes. `ids` are the demo's names of users,
    conversations and messages (conversation="trio", user="bob", message="m7")."""
    command = [RECEIPTCTL, "send", kind, "--data-dir", DATA_DIR, "--output-json"]
    for flag, value in ids.items():
        command += [f"--{flag}", f"{NAMESPACE}.{value}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=True)
    outcome = json.loads(done.stdout)
    assert outcome["outcome"] == "accepted", (command, outcome)


def settle(seconds=1.0):
    """Gives a receipt that must NOT appear the time it would take to appear."""
    time.sleep(seconds)
