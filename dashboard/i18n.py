"""UI strings (dashboard/i18n/<lang>.json) and the language choice for a request:
``?lang=`` (remembered in a cookie), then the cookie, then Accept-Language, then French."""

from __future__ import annotations

import json
import logging
import tomllib
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

from dashboard.config import LANGS, Lang
from dashboard.game import GAME
from engine import games
from engine.games.base import GameDefinition

I18N_DIR = Path(__file__).with_name("i18n")
COOKIE = "lang"
# A venue whose box prints other family names renames them in <data dir>/families.toml:
#   [grey-a]
#   fr = "Queues de rat"
#   en = "Rat tails"
#   de = "Rattenschwänze"
FAMILIES_FILE = "families.toml"
log = logging.getLogger("cauldron.dashboard")


@cache
def strings(lang: Lang) -> dict[str, str]:
    data: dict[str, str] = json.loads((I18N_DIR / f"{lang}.json").read_text(encoding="utf-8"))
    return data


def _as_lang(value: str | None) -> Lang | None:
    value = (value or "").strip().lower()[:2]
    for lang in LANGS:
        if value == lang:
            return lang
    return None


def negotiate(query: str | None, cookie: str | None, accept: str | None, default: Lang) -> Lang:
    """The language for a page request."""
    for candidate in (query, cookie):
        chosen = _as_lang(candidate)
        if chosen:
            return chosen
    ranked: list[tuple[float, int, str]] = []
    for i, part in enumerate((accept or "").split(",")):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        ranked.append((-q, i, tag))
    for _q, _i, tag in sorted(ranked):
        chosen = _as_lang(tag)
        if chosen:
            return chosen
    return default


@cache
def catalogue_for(lang: Lang, game_id: str = GAME.id) -> dict[str, Any]:
    """What the pages need of a game in one language: its page catalogue (Glastonbury's
    colours, families, spells…; Quacks' words…) and, from the game seam, every piece's
    name (``piece_names``, the labels of enrolment and of a code's ids) and what a spare
    can be asked for (``spares``: each kind of a game that enrols by kind, else each piece)."""
    game = games.get(game_id)
    catalogue, names = game.catalogue, game.names
    named = {piece: names.piece(piece, lang) for piece in catalogue.pieces}
    if catalogue.enrol_by == "kind":
        firsts: dict[str, str] = {}
        for piece in catalogue.pieces:
            firsts.setdefault(catalogue.kinds[piece], piece)
        spares = [{"id": kind, "name": named[piece]} for kind, piece in firsts.items()]
    else:  # each piece its own: identical ones told apart by their number
        count = Counter(named.values())
        seen: Counter[str] = Counter()
        spares = []
        for piece in catalogue.pieces:
            seen[named[piece]] += 1
            copy = f" ({seen[named[piece]]})" if count[named[piece]] > 1 else ""
            spares.append({"id": piece, "name": named[piece] + copy})
    return {**game.page_catalogue(lang), "piece_names": named, "spares": spares}


@cache
def page_catalogue_for(lang: Lang, game_id: str = GAME.id) -> dict[str, Any]:
    """What every page of a table of the game needs in one language: its page catalogue.
    The pieces' names (`catalogue_for`) only for a game of identical pieces of a kind
    (Quacks' chips: the pages name them by them); a game whose pages name its pieces from
    their parts (Glastonbury's colours and families) leaves every card id out of its pages,
    so that a seat's page holds no card id it does not show (its tests look for covered
    cards in its HTML)."""
    game = games.get(game_id)
    page = game.page_catalogue(lang)
    if game.catalogue.enrol_by == "kind":
        page = {**page, "piece_names": catalogue_for(lang, game_id)["piece_names"]}
    return page


def family_renames(data_dir: Path | None) -> dict[str, dict[str, str]]:
    """The venue's family names (``families.toml`` in the data dir), checked: unknown
    families or languages are reported and skipped, never shown."""
    if data_dir is None:
        return {}
    path = data_dir / FAMILIES_FILE
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        log.warning("%s is not valid TOML (%s): the catalogue's names are used", path, exc)
        return {}
    known = set(GAME.page_catalogue("en")["families"])
    out: dict[str, dict[str, str]] = {}
    for family, names in data.items():
        if family not in known or not isinstance(names, dict):
            log.warning("%s: %r is not a family id (e.g. grey-a): skipped", path, family)
            continue
        out[family] = {lang: str(name).strip() for lang, name in names.items()
                       if lang in LANGS and str(name).strip()}
    return out


def bundle(lang: Lang, renames: dict[str, dict[str, str]] | None = None,
           game: GameDefinition = GAME) -> dict[str, Any]:
    """Everything a page's script needs for its language: the shell's words and the game's
    page catalogue (with the venue's family names, for a game that has families)."""
    catalogue = page_catalogue_for(lang, game.id)
    if renames and "families" in catalogue:
        families = dict(catalogue["families"])
        for family, names in renames.items():
            if lang in names:
                families[family] = names[lang]
        catalogue = {**catalogue, "families": families}
    return {"lang": lang, "t": strings(lang), "catalogue": catalogue}
