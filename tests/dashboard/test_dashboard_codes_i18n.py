"""Every text for people is a code with parameters, rendered by the pages in en/fr/de (issue 18,
item 4): each code the engine, the bots and the dashboard send — alerts, the steps of an undo,
what an undo took back, why a bot waits, every refusal of the hub, the engine and the
dashboard — is rendered in real Chromium by the
pages' own functions (dashboard/static/core.js) in every language with sample parameters. A
missing key, a parameter left unfilled, or an English word left in fr/de fails.

The codes are read from the sources that send them, so a new code without its words fails
here."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest
from dashkit import Dash

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
FALLBACK = "ENGLISH FALLBACK"
# English words that must not survive in a French or German text (card names, rule ids and
# tag UIDs are filled in by the page in its language).
ENGLISH = re.compile(r"\b(the|card|back|put|lift|from|lay|pile|turn|waiting|holds|seat|row|"
                     r"column|take|taken|first|then|with|is|it|of|and|or|to|your|must|"
                     r"cannot|should|missing|empty|refill|undone|nothing|pawn|hole|tag)\b",
                     re.IGNORECASE)
SAMPLE = {"card": "yellow-a-3", "held_card": "red-b-2", "top": "red-a-1", "owed": "red-a-4",
          "expected": "yellow-a-3", "seen": "red-b-2", "cell": "1,2", "held_cell": "2,3",
          "hole": "0,2", "other": "3,4", "from": "4,1", "seat": 1, "victim": 0, "turn": 0,
          "pad": 1, "line": 3, "at": 4, "to": 6, "position": 7, "origin": "2,2", "who": "host",
          "rule": "G4", "seconds": 30, "field": "players"}


def _source(path: str) -> str:
    return (ROOT / path).read_text("utf-8")


def alert_codes() -> set[str]:
    text = _source("engine/games/glastonbury/table/interpreter.py")
    codes = set(re.findall(r'_Reason\(\s*[\w."]+,\s*"([a-z_]+)"', text))
    codes |= set(re.findall(r'\bcode = "([a-z_]+)"', text))
    codes |= set(re.findall(r'PawnProblem\(\s*[\w"]+,\s*"([a-z_]+)"',
                            _source("engine/games/glastonbury/table/pawn_check.py")))
    assert {"refill_first", "one_card_per_turn", "undone", "pawn_missing"} <= codes, codes
    return codes


def step_codes() -> set[str]:
    text = _source("engine/games/glastonbury/table/interpreter.py")
    body = text[text.index("def undo_steps"):]
    body = body.split("\ndef ")[0]  # to the next function, or the end of the file
    return set(re.findall(r'code="([a-z_]+)"', body))


def undone_codes() -> set[str]:
    text = _source("engine/games/glastonbury/table/interpreter.py")
    body = text[text.index("def undone_wire"):text.index("def undo_steps")]
    return set(re.findall(r'"([a-z_]+)"', body)) - {"code", "cell", "card"}


def waiting_codes() -> set[str]:
    text = _source("engine/app/demo/driver.py")
    codes: set[str] = set()
    for start in (m.end() for m in re.finditer(r"\bWaiting\(", text)):
        depth, end = 1, start
        while depth:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        codes |= set(re.findall(r'(?<!get\()"([a-z_]+)"(?!\s*:)', text[start:end]))  # no key
    return codes


def enrol_codes() -> set[str]:
    """What enrolment says: the keys of hub/enroll.py ``WORDS`` (its English table)."""
    tree = ast.parse(_source("hub/enroll.py"))
    words = next(n.value for n in ast.walk(tree) if isinstance(n, ast.AnnAssign)
                 and isinstance(n.target, ast.Name) and n.target.id == "WORDS")
    assert isinstance(words, ast.Dict)
    codes = {k.value for k in words.keys
             if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    assert {"enrolling", "next", "enrolled", "undone", "skipped", "stopped_saved"} <= codes
    return codes


# Every parameter an enrolment code takes (hub/enroll.py), a copy of an identical card too.
ENROL_SAMPLE = {"card": "accio-2", "card_copy": 2, "card_copies": 2, "before": "red-b-2",
                "uid": "04AABBCC", "seat": 2, "done": 3, "total": 84, "skipped": 1, "n": 2,
                "error": "-", "reason": "-", "hint": "",
                "count": 20, "kind_done": 3, "old": "04DDEEFF"}  # by kind, spares (hub)


# Everything that refuses, and where its code is: (positional index, default code).
REFUSERS: dict[str, tuple[int | None, str | None]] = {
    "CommandRefused": (None, None), "Refused": (None, "refused"), "Unauthorised": (1, None),
    "VirtualError": (1, "not_possible"), "Refusal": (2, None), "_refused": (0, None),
    "CommandResult": (None, None), "CommandResponse": (None, None), "CountRefused": (0, None)}


def refusal_codes() -> set[str]:
    """Every code the hub, the engine and the dashboard can refuse with, read from their
    sources: the ``code`` of each refusal they construct (or its default)."""
    codes: set[str] = set()
    for part in ("engine", "hub", "dashboard"):
        for path in sorted((ROOT / part).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                name = (func.id if isinstance(func, ast.Name)
                        else func.attr if isinstance(func, ast.Attribute) else "")
                if name not in REFUSERS:
                    continue
                index, default = REFUSERS[name]
                given = next((k.value for k in node.keywords if k.arg == "code"), None)
                if given is None and index is not None and len(node.args) > index:
                    given = node.args[index]
                if given is None:
                    codes |= {default} if default else set()
                    continue
                choices = [given]  # a code chosen by a condition: each of its constants
                while choices:
                    one = choices.pop()
                    if isinstance(one, ast.IfExp):
                        choices += [one.body, one.orelse]
                    elif isinstance(one, ast.Constant) and isinstance(one.value, str):
                        codes.add(one.value)
    hub = {c for c in codes if f'code="{c}"' in _source("hub/service.py")}
    assert {"no_table_io", "sim_refused", "wrong_epoch", "game_in_progress", "held_by_alert",
            "not_your_turn", "no_choice_now", "unauthorised", "no_answer"} <= codes, codes
    assert len(hub) >= 15, hub  # a floor: the derivation still finds the hub's codes
    return codes


def test_every_refusal_code_has_words_in_every_language() -> None:
    """The i18n files themselves: a refusal code with no ``refusal_<code>`` in en, fr or de
    fails here by name (the browser test below renders them)."""
    missing = [f"{lang}: refusal_{code}" for lang in ("en", "fr", "de")
               for code in sorted(refusal_codes())
               if f"refusal_{code}" not in json.loads(_source(f"dashboard/i18n/{lang}.json"))]
    assert not missing, missing


def test_every_enrolment_code_has_words_in_every_language() -> None:
    """What enrolment says on the host page: a code of hub/enroll.py with no ``enrol_<code>``
    (or its plural forms) in en, fr or de fails here by name."""
    missing = [f"{lang}: enrol_{code}" for lang in ("en", "fr", "de")
               for code in sorted(enrol_codes())
               if not {f"enrol_{code}", f"enrol_{code}#other"}
               & set(json.loads(_source(f"dashboard/i18n/{lang}.json")))]
    assert not missing, missing


RENDER = """async ([alerts, steps, undone, waiting, refusals, sample, enrol]) => {
  const m = await import("/static/core.js");
  const seats = [{colour: "yellow"}, {colour: "red"}];
  const out = {};
  for (const a of alerts) {
    const w = m.alertWords(a, seats);
    out["al_" + a.params.code] = w.msg;
    out["al_" + a.params.code + "_do"] = w.fix;
  }
  for (const s of steps) out["undo_step_" + s.code] = m.undoStepWords(s, seats);
  for (const u of undone) out["undone_" + u.code] = m.undoneWords([u], seats);
  for (const [code, params] of waiting) {
    const virtual = {waiting: {"1": "ENGLISH FALLBACK"}, waiting_codes: {"1": {code, ...params}}};
    const lines = m.waitingLines(virtual, seats);
    out["wait_" + code] = lines[0].text;
  }
  for (const code of refusals) {
    const e = {code, message: "ENGLISH FALLBACK", params: sample};
    out["refusal_" + code] = m.refusalText(e, seats);
  }
  for (const [code, params] of enrol) {
    for (const n of [1, 2]) {
      const said = [{code, params: {...params, n}}];
      out[`enrol_${code} n=${n}`] = m.enrolWords(said, "ENGLISH FALLBACK");
    }
  }
  return out;
}"""


def test_every_code_renders_in_every_language_with_no_english_left(
        dash: Dash, browser: Any) -> None:
    alerts = [{"alert_id": f"a-{code}", "rule": "G4", "message": FALLBACK,
               "instruction": FALLBACK, "severity": "error", "seat": 1,
               "params": {**SAMPLE, "code": code, "undone": [{"code": "take", "cell": "1,2"}],
                          **({"seen": "uid:04AABBCC", "card": "uid:04AABBCC"}
                             if code in ("unknown_tag", "retired_tag") else {})}}
              for code in sorted(alert_codes())]
    steps = [{"code": code, "text": FALLBACK, **SAMPLE} for code in sorted(step_codes())]
    undone = [{"code": code, **SAMPLE} for code in sorted(undone_codes())]
    waiting = [[code, {k: SAMPLE[k] for k in ("who", "card", "origin", "pad", "rule")}]
               for code in sorted(waiting_codes())]
    refusals = sorted(refusal_codes())
    enrol = [[code, ENROL_SAMPLE] for code in sorted(enrol_codes())]
    assert steps and undone and waiting and refusals and enrol
    context = browser.new_context()
    page = context.new_page()
    problems: list[str] = []
    try:
        for lang in ("en", "fr", "de"):
            page.goto(f"{dash.url}/?lang={lang}")
            rendered: dict[str, str] = page.evaluate(RENDER, [alerts, steps, undone, waiting,
                                                              refusals, SAMPLE, enrol])
            assert len(rendered) >= len(alerts) * 2 + len(steps) + len(undone)
            for key, text in sorted(rendered.items()):
                if not text or FALLBACK in text:
                    problems.append(f"{lang} {key}: no words of its own ({text!r})")
                elif re.search(r"\{\w+\}", text):
                    problems.append(f"{lang} {key}: a parameter left unfilled: {text}")
                elif lang != "en" and (word := ENGLISH.search(text)):
                    problems.append(f"{lang} {key}: English word {word.group(0)!r}: {text}")
    finally:
        context.close()
    assert not problems, "\n".join(problems)
