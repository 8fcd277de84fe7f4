"""Score-only mode in a real Chromium: the count page served as `cauldron count --backend sim`
serves it (the count app, the simulated reader on its reader thread), driven like a person.

Cards are laid on the simulated reader as a person lays them on a USB reader (the test is the
hand), or picked on the page; everything is checked on the page, and the totals against
`cauldron score` on the same cards (built here, independently of the page)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from dashkit import PIN, Server

from dashboard.config import Settings
from dashboard.count import CountDesk
from dashboard.main import create_count_app
from engine.app.cli import main as cauldron
from engine.app.count import ReaderLoop, connect
from hub.backends.sim import SimulatedTable, virtual_box_tagmap
from hub.layout import Layout
from hub.tagmap import TagMap

pytestmark = pytest.mark.browser

COLOURS = ("yellow", "red", "green", "blue")
# Each seat's final hand, in tap order: cauldron cards, Immuto, spells.
HANDS = {
    0: ["yellow-a-4", "yellow-a-3", "yellow-a-1", "immuto-1", "orange-a-2", "accio-1"],
    1: ["red-a-4", "red-b-2", "red-b-3", "violet-a-1", "violet-a-2", "vanesco-1"],
    2: ["green-a-1", "green-a-2", "green-a-3", "green-a-4", "black-b-4", "perluceo-2"],
    3: ["blue-b-1", "grey-a-4", "grey-a-3", "grey-a-2", "immuto-2", "declinatio-1"],
}


@dataclass
class CountTable:
    url: str
    desk: CountDesk
    loop: ReaderLoop
    sim: SimulatedTable
    tagmap: TagMap

    def lay(self, card: str) -> None:
        """A person taps ``card`` on the (simulated) reader."""
        self.loop.sim_tap(card)

    def lay_uid(self, uid: str) -> None:
        pad = self.loop.pads[0]
        placed = self.loop._expect("placed", uid)
        removed = self.loop._expect("removed", uid)
        self.sim.place(pad, uid=uid)
        assert placed.wait(5)
        self.sim.remove(pad)
        assert removed.wait(5)


@pytest.fixture
def count_table(tmp_path: Path) -> Iterator[CountTable]:
    tagmap = TagMap(tmp_path / "tagmap.json", tags=dict(virtual_box_tagmap().items()))
    sim = SimulatedTable(Layout(pads=1), tagmap=tagmap)
    sim.open()
    desk = CountDesk(tmp_path / "count.json")
    loop = connect(sim, tagmap, desk)
    server = Server(create_count_app(Settings(pin=PIN, default_lang="en", virtual=False),
                                     desk)).start()
    try:
        yield CountTable(server.url, desk, loop, sim, tagmap)
    finally:
        server.stop()
        loop.stop.set()
        loop.thread.join(5)
        sim.close()


def cauldron_score(data: dict[str, Any], tmp_path: Path,
                   capsys: pytest.CaptureFixture[str]) -> dict[int, int]:
    path = tmp_path / "same-cards.json"
    path.write_text(json.dumps(data))
    capsys.readouterr()
    assert cauldron(["score", str(path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    return {s["seat"]: s["total"] for s in result["seats"]}


def score_input(hands: dict[int, list[str]], recipes: dict[int, list[str]] | None = None,
                last_card_seat: int | None = None) -> dict[str, Any]:
    players = []
    for seat, cards in hands.items():
        players.append({
            "seat": seat, "colour": COLOURS[seat],
            "cauldron": [c for c in cards if c.split("-")[0] in (*COLOURS, "orange", "violet",
                                                                 "white", "black", "grey",
                                                                 "immuto")],
            "spells": [c for c in cards if c.split("-")[0] in ("accio", "declinatio",
                                                               "vanesco", "perluceo")],
            "recipes": (recipes or {}).get(seat, []),
        })
    return {"players": players, "last_card_seat": last_card_seat}


def open_count(page: Any, url: str, lang: str = "en") -> None:
    page.goto(f"{url}/count?lang={lang}#pin={PIN}")
    page.wait_for_selector("#setup:not([hidden]) form")


def start(page: Any, players: int = 4, recipes: bool = False, last_card: int | None = None) -> None:
    form = page.locator("#setup-form")
    form.locator(f"input[name=players][value='{players}']").check()
    if recipes:
        form.locator("input[name=recipes]").check()
    if last_card is not None:
        form.locator("select[name=last]").select_option(str(last_card))
    form.locator("button[type=submit]").click()
    page.wait_for_selector(f".count-seat[data-seat='{players - 1}']")


def seat(page: Any, n: int) -> Any:
    return page.locator(f".count-seat[data-seat='{n}']")


def wait_card(page: Any, n: int, card: str, present: bool = True) -> None:
    selector = f".count-seat[data-seat='{n}'] .tap-list li[data-card='{card}']"
    page.wait_for_selector(selector, state="attached" if present else "detached")


def total(page: Any, n: int) -> int:
    return int(seat(page, n).locator(".total").inner_text())


def test_a_whole_count_of_four_seats(page: Any, browser: Any, count_table: CountTable,
                                     tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    open_count(page, count_table.url)
    start(page)
    phone = browser.new_page()
    phone.goto(f"{count_table.url}/count/seat/1?lang=en")
    phone.wait_for_selector(".count-seat[data-seat='1']")
    assert phone.locator(".count-seat").count() == 1  # a seat's phone shows its own list
    assert phone.locator("#setup-form, .seat-controls, .manual").count() == 0

    for n, cards in HANDS.items():
        page.wait_for_selector(f".count-seat.active[data-seat='{n}']")
        for i, card in enumerate(cards):
            if i == 0:  # the first card through the page's simulated reader, the rest by hand
                page.locator("#sim-form select").select_option(card)
                page.locator("#sim-form button[type=submit]").click()
            else:
                count_table.lay(card)
            wait_card(page, n, card)
        if n == 1:
            phone.wait_for_selector(".tap-list li[data-card='vanesco-1']")  # the phone follows
            # The same card again, for another seat: refused, naming the seat that has it.
            count_table.lay("yellow-a-4")
            message = page.locator("#message.refused")
            message.wait_for()
            assert "already counted for Seat 1 (yellow" in message.inner_text()
            assert seat(page, 1).locator("li[data-card='yellow-a-4']").count() == 0
        if n == 2:  # a wrong tap, undone
            before = total(page, 2)
            count_table.lay("white-a-4")
            wait_card(page, 2, "white-a-4")
            page.wait_for_function(
                f"document.querySelector(\".count-seat[data-seat='2'] .total\").textContent"
                f" !== '{before}'")
            seat(page, 2).get_by_role("button", name="Undo last tap").click()
            wait_card(page, 2, "white-a-4", present=False)
            page.wait_for_function(
                f"document.querySelector(\".count-seat[data-seat='2'] .total\").textContent"
                f" === '{before}'")
        seat(page, n).get_by_role("button", name="Done").click()

    podium = page.locator("#podium")
    podium.wait_for()
    expected = cauldron_score(score_input(HANDS), tmp_path, capsys)
    assert {n: total(page, n) for n in HANDS} == expected
    places = podium.locator("li")
    assert places.count() == 4
    best = max(expected.values())
    first = podium.locator("li[data-place='1']")
    assert {int(x.get_attribute("data-seat")) for x in first.all()} == {
        s for s, t in expected.items() if t == best}
    assert str(best) in first.first.inner_text()
    assert page.locator("#breakdown .score-seat").count() == 4  # the full breakdown
    assert page.locator("#breakdown h2").inner_text() == "Final score"
    phone.wait_for_selector("#podium:not([hidden])")
    page.emulate_media(media="print")
    assert not page.locator("#setup-form, .seat-controls").first.is_visible()
    page.screenshot(path=str(tmp_path / "count-print.png"), full_page=True)
    phone.close()


def test_manual_and_mixed_entry_with_recipes(page: Any, count_table: CountTable,
                                             tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    hands = {0: ["orange-a-1", "orange-a-2", "immuto-1", "accio-2"],
             1: ["red-a-4", "red-a-3", "orange-b-4", "vanesco-3"]}
    recipes = {0: ["A-orange"], 1: ["B-last-card"]}
    open_count(page, count_table.url)
    start(page, players=2, recipes=True, last_card=1)
    # Seat 1: every card picked by hand (tags lost); Seat 2: tags and a few by hand.
    for card in hands[0] + recipes[0]:
        seat(page, 0).locator("form.manual select").select_option(card)
        seat(page, 0).locator("form.manual button[type=submit]").click()
        wait_card(page, 0, card)
    seat(page, 0).get_by_role("button", name="Done").click()
    page.wait_for_selector(".count-seat.active[data-seat='1']")
    for i, card in enumerate(hands[1] + recipes[1]):
        if card in recipes[1] or i % 2:
            seat(page, 1).locator("form.manual select").select_option(card)
            seat(page, 1).locator("form.manual button[type=submit]").click()
        else:
            count_table.lay(card)
        wait_card(page, 1, card)
    sources = seat(page, 1).locator(".tap-list .src").all_inner_texts()
    assert set(sources) == {"tag", "by hand"}
    # A card picked by hand is taken: the other seat's picker offers it no more.
    option = seat(page, 1).locator("form.manual option[value='orange-a-1']")
    assert option.is_disabled()
    # With 2 players the unused colour is out of the box: its tag is refused.
    count_table.lay("green-b-3")
    page.wait_for_selector("#message.refused")
    refusal = page.locator("#message").inner_text()
    assert "with 2 players the green" in refusal and "cards are out of the box" in refusal
    # A card counted for the wrong seat is removed there.
    count_table.lay("grey-b-1")
    wait_card(page, 1, "grey-b-1")
    seat(page, 1).locator("li[data-card='grey-b-1'] button.remove").click()
    wait_card(page, 1, "grey-b-1", present=False)
    seat(page, 1).get_by_role("button", name="Done").click()
    page.locator("#podium").wait_for()
    expected = cauldron_score(score_input(hands, recipes, last_card_seat=1), tmp_path, capsys)
    assert {n: total(page, n) for n in hands} == expected
    breakdown = page.locator("#breakdown").inner_text()
    assert "orange" in breakdown.lower()


def test_an_unknown_tag_points_to_enrolment_then_counts(page: Any,
                                                        count_table: CountTable) -> None:
    open_count(page, count_table.url)
    start(page, players=3, recipes=True)
    count_table.tagmap.remove_card("white-b-2")  # its sticker was lost: a new tag replaces it
    uid = "04DEADBEEF0001"
    count_table.lay_uid(uid)
    message = page.locator("#message.unknown_tag")
    message.wait_for()
    assert "not enrolled" in message.inner_text()
    assert message.locator("a[href='#enrol']").count() == 1
    enrol = page.locator("#enrol")
    enrol.locator("select").select_option("white-b-2")
    enrol.locator("button[type=submit]").click()
    wait_card(page, 0, "white-b-2")
    assert count_table.tagmap.card_for(uid) == "white-b-2"
    assert TagMap.load(count_table.tagmap.path).card_for(uid) == "white-b-2"  # type: ignore[arg-type]
    # A recipe card's tag: asked once, then known (recipe cards stay out of the tag map).
    recipe_uid = "04DEADBEEF0002"
    count_table.lay_uid(recipe_uid)
    page.wait_for_selector(f"#enrol-form[data-uid='{recipe_uid}']")
    enrol.locator("select").select_option("B-most-ones")
    enrol.locator("button[type=submit]").click()
    wait_card(page, 0, "B-most-ones")
    assert recipe_uid not in count_table.tagmap
    seat(page, 0).get_by_role("button", name="Done").click()
    page.wait_for_selector(".count-seat.active[data-seat='1']")
    count_table.lay_uid(recipe_uid)
    page.wait_for_selector("#message.refused")
    assert "already counted for Seat 1" in page.locator("#message").inner_text()
    saved = json.loads((count_table.tagmap.path.parent / "recipe-tags.json").read_text())  # type: ignore[union-attr]
    assert saved == {recipe_uid: "B-most-ones"}


@pytest.mark.parametrize("path", ["/count?lang=de#pin=" + PIN, "/count/seat/2?lang=de"])
def test_the_count_page_does_not_scroll_sideways_at_360px(browser: Any, count_table: CountTable,
                                                          path: str) -> None:
    from dashboard.count import CountSetup

    count_table.desk.start(CountSetup(COLOURS, recipes=True, last_card_seat=0))
    for seat_number, cards in HANDS.items():
        for card in cards:
            count_table.desk.tap(card, seat_number, "manual")
    count_table.desk.tap("B-fewest-ingredients", 2, "manual")
    context = browser.new_context(viewport={"width": 360, "height": 740}, locale="de-DE")
    page = context.new_page()
    try:
        page.goto(count_table.url + path)
        # (on a phone the host's page folds the lists of the seats not being counted)
        page.wait_for_selector(".count-seat[data-seat='2'] li[data-card='perluceo-2']",
                               state="attached")
        page.wait_for_selector("#breakdown .score-seat", state="attached")
        over = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert over <= 0, f"{path} scrolls sideways by {over} px at 360 px"
    finally:
        context.close()


@pytest.mark.parametrize("view", ["counting", "finished", "phone", "login"])
def test_axe_no_serious_or_critical_violation_on_the_count_page(
        page: Any, count_table: CountTable, view: str) -> None:
    from test_dashboard_a11y import axe_violations, summary

    from dashboard.count import CountSession, CountSetup

    count_table.desk.start(CountSetup(COLOURS[:3], recipes=True, last_card_seat=1))
    for seat_number in range(3):
        for card in HANDS[seat_number][:4]:
            count_table.desk.tap(card, seat_number, "manual")
    count_table.desk.tap("A-orange", 0, "manual")
    count_table.lay("yellow-a-4")  # refused: the message stands
    if view == "finished":
        for seat_number in range(3):

            def done(s: CountSession, n: int = seat_number) -> None:
                s.set_done(n)

            count_table.desk.act(done)
    path = {"phone": "/count/seat/1?lang=en", "login": "/count?lang=en"}.get(
        view, f"/count?lang=en#pin={PIN}")
    page.goto(count_table.url + path)
    if view == "login":
        page.wait_for_selector("#login:not([hidden]) #pin")
    else:
        page.wait_for_selector(".count-seat[data-seat='1'] .tap-list li")
        page.wait_for_selector("#breakdown .score-seat")
    if view == "finished":
        page.wait_for_selector("#podium:not([hidden]) li")
    violations = axe_violations(page)
    bad = [v for v in violations if v["impact"] in ("serious", "critical")]
    assert not bad, summary(bad)
