"""The table's game as the dashboard shell knows it: through the game seam only
(`engine.games`), never a game's own modules. `GAME` is the registry's default game, the
one a dashboard serves until the table says it plays another (`Settings.game`, then the
view's game); `page_game` is what a page's boot data says of its game (its id, title and
fragment scripts), and `mount_fragments` serves every offered game's fragments under
``/games/<id>/static/``."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from jinja2 import BaseLoader, FileSystemLoader, PrefixLoader

from engine import games
from engine.games.base import GameDefinition, Lang, option_fields

GAME: Final[GameDefinition] = games.get()


def static_url(game: GameDefinition, name: str) -> str:
    """Where a file of the game's ``fragments.static`` is served."""
    return f"/games/{game.id}/static/{name}"


def page_game(game: GameDefinition, page: str, lang: Lang) -> dict[str, Any]:
    """The boot data's ``game``: the game's id and title, and this page's fragment scripts
    and styles (core.js `gameHooks` imports the scripts and calls their hooks)."""
    fragments = game.fragments
    return {"id": game.id, "title": game.titles[lang],
            "scripts": [static_url(game, s) for s in fragments.scripts.get(page, ())],
            "styles": [static_url(game, s) for s in fragments.styles]}  # fmt: skip


def offers(game: GameDefinition, page: str) -> bool:
    """Whether the game has a fragment for the shell's ``page`` (no virtual table: no
    ``"virtual"`` scripts)."""
    return bool(game.fragments.scripts.get(page))


def page_template(game: GameDefinition, page: str) -> str | None:
    """The game's own markup for ``page`` (``<templates>/<page>.html``, included by the
    shell's page as ``<id>/<page>.html``), or None: the shell's generic ``#game-root``."""
    folder = game.fragments.templates
    if folder is None or not (folder / f"{page}.html").is_file():
        return None
    return f"{game.id}/{page}.html"


def host_games(lang: Lang, table: GameDefinition) -> list[dict[str, Any]]:
    """Every offered game as the host page's New game form shows it: id, title, its host
    fragment scripts, its own options markup (``<id>/host.html``) or the fields of its
    options model (`option_fields`, labelled by its page catalogue's ``option_labels`` in
    the page's language, else by the option's description), whether it has a virtual
    table, and its page catalogue (its host fragment draws from it, and the enrolment panel
    names the pieces of the hub's game with it)."""
    from dashboard.i18n import catalogue_for  # (dashboard.i18n imports this module)

    out = []
    for game in games.games():
        catalogue = catalogue_for(lang, game.id)
        labels = catalogue.get("option_labels", {})
        fields = [{**asdict(f), "label": labels.get(f.name) or f.description}
                  for f in option_fields(game.options)]  # fmt: skip
        scripts = [static_url(game, s) for s in game.fragments.scripts.get("host", ())]
        out.append({"id": game.id, "title": game.titles[lang], "fields": fields, "scripts": scripts,
                    "template": page_template(game, "host"), "virtual": offers(game, "virtual"),
                    "catalogue": catalogue, "table": game.id == table.id})  # fmt: skip
    return out


def template_loader(shell: Path) -> BaseLoader:
    """The shell's templates, and each game's under its id (``glastonbury/table.html``)."""
    from jinja2 import ChoiceLoader

    own = {g.id: FileSystemLoader(str(g.fragments.templates))
           for g in games.games() if g.fragments.templates is not None}  # fmt: skip
    return ChoiceLoader([FileSystemLoader(str(shell)), PrefixLoader(own)])


def mount_fragments(app: FastAPI) -> None:
    """Serve every offered game's static fragments under ``/games/<id>/static/``."""
    for game in games.games():
        app.mount(f"/games/{game.id}/static", StaticFiles(directory=str(game.fragments.static)),
                  name=f"game-{game.id}")  # fmt: skip
