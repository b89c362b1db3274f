"""The game pad in a real headless Chromium (Debian's ``chromium`` + ``chromium-driver``, via Selenium).

A person plays whole games by clicking — Spiffel against ``optimal``, Farkle against
``win-optimal`` — and two browser sessions share one room. Screenshots of the pad are saved
under ``test-artifacts/`` (git-ignored). The browser is the system's: Selenium is pointed at
``/usr/bin/chromedriver`` and ``/usr/bin/chromium`` and never downloads anything; the tests skip
(with that reason) only where those are not installed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
    pytest.skip(
        "chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)",
        allow_module_level=True,
    )
pytest.importorskip("selenium", reason="selenium (the dev extra) is not installed")
pytest.importorskip("uvicorn", reason="uvicorn (the web extra) is not installed")

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402
from webpad import running_pad  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
BOT_DELAY = 0.02
WAIT = 60
#: Chromium flags: headless, no sandbox (root in CI), and nothing that talks to the network.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1100,1300",
)
FARKLE_SEED = int(os.environ.get("FARKLE_SEED", "1"))


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The game pad on a free loopback port, in a thread of this process.

    The Spiffel value table of the ``optimal`` bot is solved (or read from the session's solver
    cache) first, so the page's waits measure the pad, not a first solve on a busy machine.
    """
    from agents.solver import scorecard_solution

    scorecard_solution("spiffel")
    with running_pad(bot_delay=BOT_DELAY) as url:
        yield url


@pytest.fixture()
def browser() -> Iterator[Callable[[], Any]]:
    """A factory of headless Chromium sessions, each with a fresh profile; all closed afterwards."""
    os.environ["SE_OFFLINE"] = "true"  # selenium-manager must never fetch anything
    drivers: list[Any] = []
    dirs: list[str] = []

    def make() -> Any:
        profile = tempfile.mkdtemp(prefix="dice-envs-chromium-")
        dirs.append(profile)
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        for flag in (*FLAGS, f"--user-data-dir={profile}"):
            opts.add_argument(flag)
        driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
        driver.set_page_load_timeout(WAIT)
        drivers.append(driver)
        return driver

    yield make
    for d in drivers:
        d.quit()
    for p in dirs:
        shutil.rmtree(p, ignore_errors=True)


def shot(driver: Any, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    driver.save_screenshot(str(path))
    return path


def state(driver: Any) -> dict[str, Any]:
    """What the page holds (the server's last view and who this session is)."""
    return driver.execute_script("return {room: window.padState.room, me: window.padState.me};")


def wait(driver: Any, cond: Callable[[Any], Any], what: str, timeout: float = WAIT) -> Any:
    """Wait for ``cond``; on a timeout save a screenshot and say what the page held."""
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.02).until(cond)
    except TimeoutException:
        shot(driver, "timeout")
        held = driver.execute_script(
            "return JSON.stringify(window.padState.room && window.padState.room.log);"
        )
        raise AssertionError(f"timed out waiting for {what}; the page's log: {held}") from None


def open_page(driver: Any, url: str) -> None:
    driver.get(url)
    wait(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1", "the page")


def set_seat(driver: Any, index: int, value: str) -> None:
    rows = driver.find_elements(By.CSS_SELECTOR, "#seat-list .seat-row")
    while len(rows) <= index:
        driver.find_element(By.ID, "add-seat").click()
        rows = driver.find_elements(By.CSS_SELECTOR, "#seat-list .seat-row")
    Select(rows[index].find_element(By.CSS_SELECTOR, "select")).select_by_value(value)


def click(driver: Any, css: str, index: int = 0) -> None:
    """Click the ``index``-th element matching ``css`` (found afresh: the page redraws on updates)."""
    for _ in range(10):
        try:
            driver.find_elements(By.CSS_SELECTOR, css)[index].click()
            return
        except StaleElementReferenceException:
            time.sleep(0.02)
    raise AssertionError(f"could not click {css}[{index}]")


def click_and_wait(driver: Any, css: str, index: int = 0) -> None:
    """Click, then wait until the page shows a newer state of the room."""
    version = state(driver)["room"]["version"]
    click(driver, css, index)
    wait(
        driver,
        lambda d: (
            state(d)["room"]["version"] > version and not d.execute_script("return window.padState.busy;")
        ),
        "the move to show",
    )


def my_turn_or_over(driver: Any) -> bool:
    s = state(driver)
    room = s["room"]
    busy = driver.execute_script("return window.padState.busy;")
    return room["status"] == "over" or (room["current"] == s["me"]["seat"] and not busy)


def hint_shown(driver: Any) -> bool:
    """The hint box shows advice for the state on screen now."""
    return driver.execute_script(
        "const p = window.padState; return !!(p.hint && p.room && p.hint.version === p.room.version);"
    ) and driver.find_element(By.ID, "hint-box").text.startswith("best:")


def read(driver: Any, css: str, prop: str) -> list[Any]:
    """A property of every element matching ``css``, read at one instant (the page redraws often)."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).map((e) => e[arguments[1]]);", css, prop
    )


# ---------------------------------------------------------------------- Spiffel against optimal
def play_scorecard_turn(driver: Any) -> None:
    """One turn as a simple person plays: keep the most frequent face twice, then the best box."""
    room = state(driver)["room"]
    sc = room["scorecard"]
    for _ in range(sc["throws_left"]):
        dice = state(driver)["room"]["scorecard"]["dice"]
        face = Counter(dice).most_common(1)[0][0]
        held = set(driver.execute_script("return Array.from(window.padState.held);"))
        for i in range(len(dice)):  # mark the dice of that face, unmark the others
            if (dice[i] == face) != (i in held):
                click(driver, "#dice-row .die", i)
        marked = [i for i, c in enumerate(read(driver, "#dice-row .die", "className")) if "held" in c]
        assert marked == [i for i, f in enumerate(dice) if f == face]
        if all(d == face for d in dice):
            break
        roll = driver.find_element(By.ID, "roll")
        assert roll.is_enabled() and "left)" in roll.text
        click_and_wait(driver, "#roll")
    css = "button.box.legal:not([disabled])"
    boxes = read(driver, css, "textContent")
    assert boxes, "an open box must be offered"
    best = max(range(len(boxes)), key=lambda i: int(boxes[i]))
    click_and_wait(driver, css, best)


def test_a_person_plays_spiffel_against_optimal_by_clicking(server: str, browser: Callable[[], Any]) -> None:
    d = browser()
    open_page(d, server)
    Select(d.find_element(By.ID, "game-select")).select_by_value("spiffel")
    set_seat(d, 1, "optimal")
    d.find_element(By.ID, "create-name").send_keys("Ann")
    d.find_element(By.ID, "create-room").click()
    start = wait(d, lambda d: d.find_element(By.ID, "start-game"), "Start Game")
    wait(d, lambda d: start.is_displayed() and start.is_enabled(), "Start Game enabled", timeout=4 * WAIT)
    start.click()
    wait(d, lambda d: state(d)["room"]["status"] == "playing", "the game to start")
    assert d.find_element(By.ID, "roll").text == "roll! (2 left)"
    # open boxes show what the current dice would score, darker (class legal) where open
    sc = state(d)["room"]["scorecard"]
    assert read(d, "button.box.legal", "textContent") == [str(p) for p in sc["now"]["points"]]
    # the hint button: the solver's best move and the cost of the others
    d.find_element(By.ID, "hint").click()
    wait(d, hint_shown, "the hint")
    assert "expected Grand Total" in d.find_element(By.ID, "hint-box").text
    shot(d, "spiffel-hint")
    turns = 0
    while True:
        wait(d, my_turn_or_over, "my turn")
        if state(d)["room"]["status"] == "over":
            break
        if turns == 6:  # the pad in mid-game, with the hint (docs/web-pad.png is made from this one)
            d.find_element(By.ID, "hint").click()
            wait(d, hint_shown, "the hint")
            shot(d, "spiffel-midgame")
        play_scorecard_turn(d)
        turns += 1
    assert turns == 13
    room = state(d)["room"]
    cards = room["scorecard"]["cards"]
    assert all(v is not None for c in cards for v in c["boxes"])
    banner = d.find_element(By.ID, "banner")
    assert banner.is_displayed() and "Game over" in banner.text
    totals = [int(t) for t in read(d, "#grand-total td[data-seat]", "textContent")]
    assert totals == room["totals"] == [c["total"] for c in cards]
    winners = [i for i, t in enumerate(totals) if t == max(totals)]
    assert banner.get_attribute("data-winners") == ",".join(map(str, winners))
    struck = read(d, "td.struck", "textContent")
    assert len(struck) == sum(v == 0 for c in cards for v in c["boxes"])
    assert all(t == "XXX" for t in struck)
    shot(d, "spiffel-final")


# ---------------------------------------------------------------------- Farkle against win-optimal
def test_a_person_plays_farkle_against_win_optimal_by_clicking(
    server: str, browser: Callable[[], Any]
) -> None:
    d = browser()
    open_page(d, f"{server}/?seed={FARKLE_SEED}")  # the same dice every run
    Select(d.find_element(By.ID, "game-select")).select_by_value("farkle")
    target = d.find_element(By.CSS_SELECTOR, "#rule-fields input[name=target]")
    target.clear()
    target.send_keys("2000")
    from agents.solver import win_probability

    win_probability("farkle", num_players=2, target=2000)  # solve (and cache) before the clock runs
    set_seat(d, 1, "win-optimal")
    d.find_element(By.ID, "create-room").click()
    wait(d, lambda d: d.find_element(By.ID, "start-game").is_displayed(), "Start Game")
    d.find_element(By.ID, "start-game").click()
    wait(d, lambda d: state(d)["room"]["status"] == "playing", "the game to start")
    assert state(d)["room"]["farkle"]["target"] == 2000
    seen_disabled = seen_bank = seen_farkle = False
    moves = 0
    while True:
        wait(d, my_turn_or_over, "my turn")
        room = state(d)["room"]
        if room["status"] == "over":
            break
        f = room["farkle"]
        if any(e["kind"] in ("farkle", "bankrupt") for e in room["log"][-3:]):
            seen_farkle = True
            assert (
                "FARKLE!" in d.find_element(By.ID, "event").text
                or "BANKRUPT!" in d.find_element(By.ID, "event").text
            )
        roll, bank = d.find_element(By.ID, "roll"), d.find_element(By.ID, "bank")
        assert bank.text == "Next player"
        if not f["set_aside"]:
            # nothing selected yet: neither "roll" nor "Next player" is legal
            assert not roll.is_enabled() and not bank.is_enabled()
            seen_disabled = True
        best = max(f["selections"], key=lambda s: (s["points"], -len(s["faces"])))
        want = Counter(best["faces"])
        for i, face in enumerate(f["dice"]):
            if want[face] > 0:
                want[face] -= 1
                click(d, "#dice-row .die", i)
        assert f"+{best['points']}" in read(d, "#turn-total", "textContent")[0]
        assert roll.is_enabled()
        assert bank.is_enabled() == best["bank"]
        if best["bank"] and (
            f["turn_total"] + best["points"] >= 400 or len(f["dice"]) - len(best["faces"]) < 3
        ):
            seen_bank = True
            click_and_wait(d, "#bank")
        else:
            click_and_wait(d, "#roll")
        moves += 1
        if moves == 4:
            shot(d, "farkle-midgame")
        assert moves < 400
    room = state(d)["room"]
    assert seen_disabled and seen_bank and seen_farkle
    assert max(room["totals"]) >= 2000
    log = d.find_element(By.ID, "log").text
    assert "FINAL ROUND" in log and "Game over" in log
    farkles = [e for e in room["log"] if e["kind"] in ("farkle", "bankrupt")]
    shown = read(d, "#log li.farkle, #log li.bankrupt", "textContent")
    assert len(shown) == len(farkles)  # every farkle / bankruptcy still in the log is shown, highlighted
    banner = d.find_element(By.ID, "banner")
    assert "Game over" in banner.text
    banked = [int(t) for t in read(d, "#grand-total td[data-seat]", "textContent")]
    assert banked == room["totals"]
    shot(d, "farkle-final")


# ---------------------------------------------------------------------- two sessions, one room
def test_two_browser_sessions_share_one_room(server: str, browser: Callable[[], Any]) -> None:
    a, b = browser(), browser()
    open_page(a, server)
    Select(a.find_element(By.ID, "game-select")).select_by_value("dice_poker")
    set_seat(a, 1, "person")
    a.find_element(By.ID, "create-name").send_keys("Ann")
    a.find_element(By.ID, "create-room").click()
    wait(a, lambda d: d.find_element(By.ID, "share-code").text, "the room code")
    code = a.find_element(By.ID, "share-code").text
    start = a.find_element(By.ID, "start-game")
    assert start.is_displayed() and not start.is_enabled()  # seat 2 is still free
    open_page(b, f"{server}/?room={code}")
    assert b.find_element(By.ID, "join-code").get_attribute("value") == code
    b.find_element(By.ID, "join-name").send_keys("Bob")
    b.find_element(By.ID, "join-game").click()
    wait(b, lambda d: state(d)["me"] is not None and state(d)["me"]["seat"] == 1, "Bob to sit")
    assert not b.find_element(By.ID, "start-game").is_displayed()  # only the opener starts
    wait(
        a,
        lambda d: "Bob" in d.find_element(By.ID, "seat-status").text and start.is_enabled(),
        "Bob on A's page",
    )
    start.click()
    wait(b, lambda d: state(d)["room"]["status"] == "playing", "the start on B's page (live)")
    # Ann's turn: Bob's pad shows her dice but lets him click nothing
    assert read(b, "button.box, .die, #roll", "disabled") == [True] * (15 + 5 + 1)
    points = int(read(a, "button.box.legal[data-box=chance]", "textContent")[0])
    click_and_wait(a, "button.box.legal[data-box=chance]")
    wait(b, lambda d: state(d)["room"]["current"] == 1, "Ann's move on B's page")
    card_b = state(b)["room"]["scorecard"]["cards"]
    assert card_b[0]["boxes"][-1] == points
    assert str(points) in b.find_element(By.ID, "card").text
    shot(b, "shared-room-bob")
    # Bob plays, Ann sees it
    click_and_wait(b, "button.box.legal[data-box=pair]")

    def bobs_move_shown(d: Any) -> bool:
        room = state(d)["room"]
        return room["current"] == 0 and room["scorecard"]["cards"][1]["boxes"][6] is not None

    wait(a, bobs_move_shown, "Bob's move on A's page")
    assert state(a)["room"]["version"] == state(b)["room"]["version"]
    shot(a, "shared-room-ann")


# ---------------------------------------------------------------------- the review after a game
def test_a_finished_game_shows_its_review_and_each_row_goes_back_to_its_position(
    server: str, browser: Callable[[], Any]
) -> None:
    import urllib.request

    from agents.evaluation.gamerecord import parse_records

    d = browser()
    open_page(d, f"{server}/?seed=5")
    Select(d.find_element(By.ID, "game-select")).select_by_value("spiffel")
    click(d, "#seat-list .seat-row button", 1)  # remove the bot seat: a solitaire game
    d.find_element(By.ID, "create-room").click()
    start = wait(d, lambda d: d.find_element(By.ID, "start-game"), "Start Game")
    wait(d, lambda d: start.is_displayed() and start.is_enabled(), "Start Game enabled")
    start.click()
    wait(d, lambda d: state(d)["room"]["status"] == "playing", "the game to start")
    while state(d)["room"]["status"] != "over":
        wait(d, my_turn_or_over, "my turn")
        if state(d)["room"]["status"] != "over":
            play_scorecard_turn(d)
    rows = wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#review-table tr.review-row"), "the review")
    review = d.execute_script("return window.padState.review;")
    assert len(rows) == len(review["rows"]) >= 13
    summary = d.find_element(By.ID, "review-summary").text
    assert "expected points to come" in summary and "per game" in summary
    code = state(d)["room"]["code"]
    with urllib.request.urlopen(f"{server}/api/rooms/{code}/record") as res:
        (log,) = parse_records(res.read().decode(), "the pad's record")
    assert log.seats == ("human",) and len(log.decisions) == len(rows)
    assert abs(sum(r["loss"] for r in review["rows"]) - review["summary"]["mean_per_game"]) < 1e-9
    shot(d, "spiffel-review")
    worst = max(range(len(rows)), key=lambda i: review["rows"][i]["loss"])
    click(d, "#review-table tr.review-row", worst)
    line = d.find_element(By.ID, "turn-line").text
    assert line.startswith(f"position of decision {worst + 1}:"), line
    assert [int(f) for f in read(d, "#dice-row .die", "textContent")] == review["rows"][worst]["dice"]
    d.find_element(By.ID, "review-back").click()
    wait(d, lambda d: not d.find_element(By.ID, "turn-line").text, "the final position again")
