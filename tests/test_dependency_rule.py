"""The dependency rule (ARCHITECTURE.md, COMMON.md), checked on the source itself.

1. A game's pure core (`engine.games.glastonbury.rules`, `engine.games.quacks`) imports
   only a small list of standard-library modules (nothing for I/O, no clock, no threads)
   and itself; it calls no I/O built-ins and makes no module-level use of the global
   `random` state (a seeded `random.Random` is passed in).
2. `hub`, `engine.service` and `dashboard` never import each other; across packages they
   may use only `engine.wire`, `engine.games` (the seam), `engine.datadir` and
   `engine.cli`. (The hub may also use `firmware`: it runs the same presence and
   line-protocol code as the readers.) Imports inside functions count too.
3. Every other package has its own list (`ALLOWED`): only the composition code
   (`COMPOSITION`: the composition root and the benchmarks, `engine.bench`) wires
   packages together, and no package imports it. Every module of the project belongs to
   one of them; benchmark code lives only in `engine.bench`.
4. Hidden game state (the cauldron stacks, the pile, the recipes) is read only inside
   Glastonbury's rules: everything else asks its observer (views, and the referee's narrow
   questions). The bots read only their own shadow and sampled worlds.
5. The game seam (issue 22): the platform (`hub`, `dashboard`, `engine.service`,
   `engine.wire`) knows games only through `engine.games` (the registry) and
   `engine.games.base` (the interface), never a game package's modules; no game imports
   another game.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "engine" / "games" / "glastonbury" / "rules"
QUACKS = ROOT / "engine" / "games" / "quacks" / "rules"  # the second game's pure core, alike

STDLIB_ALLOWED = {
    "__future__",
    "dataclasses",
    "enum",
    "typing",
    "collections",
    "collections.abc",
    "itertools",
    "functools",
    "random",  # for the `random.Random` type only
    "json",
    "importlib.resources",  # the catalogue data file shipped in the package
    "math",
    "fractions",  # exact odds (Quacks' explosion chance)
    "re",
}
IO_BUILTINS = {"open", "print", "input", "exec", "eval", "compile", "__import__", "breakpoint"}

SERVICES = {"hub": ROOT / "hub", "engine.service": ROOT / "engine" / "service",
            "dashboard": ROOT / "dashboard"}  # fmt: skip
# Across packages; `engine.games` is the seam (a game's own modules: rule 5).
SHARED = ("engine.wire", "engine.games", "engine.datadir", "engine.cli")
PROJECT_ROOTS = ("engine", "hub", "dashboard", "firmware")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, source: str | None = None) -> Iterator[tuple[int, str]]:
    """(line, absolute module) for every import in the file, functions included; for
    `from X import y` both X and X.y are offered (y may be a submodule)."""
    text = path.read_text(encoding="utf-8") if source is None else source
    tree = ast.parse(text, filename=str(path))
    package = module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def rules_files() -> list[Path]:
    files = sorted(RULES.glob("*.py"))
    assert len(files) >= 8, "engine/games/glastonbury/rules has moved?"
    quacks = sorted(QUACKS.glob("*.py"))
    assert len(quacks) >= 8, "engine/games/quacks/rules has moved?"
    return files + quacks


def pure_package(path: Path) -> str:
    quacks = path.parent == QUACKS
    return "engine.games.quacks.rules" if quacks else "engine.games.glastonbury.rules"


@pytest.mark.parametrize("path", rules_files(), ids=lambda p: module_name(p))
def test_rules_package_imports_only_pure_stdlib_and_itself(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = pure_package(path)
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bad += [(node.lineno, a.name) for a in node.names
                    if not (_rules_ok(a.name) or within(a.name, own))]  # fmt: skip
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                continue  # relative: inside its own package
            module = node.module or ""
            if within(module, own):
                continue
            if module == "importlib" and [a.name for a in node.names] == ["resources"]:
                continue
            if module == "random" and any(a.name != "Random" for a in node.names):
                bad.append((node.lineno, f"from random import {node.names[0].name}"))
            elif not _rules_ok(module):
                bad.append((node.lineno, module))
    assert not bad, f"{path.name} imports outside the allowlist: {bad}"


def _rules_ok(module: str) -> bool:
    """Allowed in a pure package: the allowlist and Glastonbury's rules (Quacks adds itself)."""
    return module in STDLIB_ALLOWED or within(module, "engine.games.glastonbury.rules")


@pytest.mark.parametrize("path", rules_files(), ids=lambda p: module_name(p))
def test_rules_package_does_no_io_and_uses_no_global_random(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    io = [(c.lineno, c.func.id) for c in calls if isinstance(c.func, ast.Name)
          and c.func.id in IO_BUILTINS]  # fmt: skip
    assert not io, f"{path.name} calls I/O built-ins: {io}"
    # Any `random.<function>(...)` call (random.shuffle, random.seed, …) uses the global,
    # unseeded state; only `random.Random` (the type) may appear.
    global_random = [
        (c.lineno, c.func.attr)
        for c in calls
        if isinstance(c.func, ast.Attribute)
        and isinstance(c.func.value, ast.Name)
        and c.func.value.id == "random"
        and c.func.attr != "Random"
    ]
    assert not global_random, f"{path.name} uses the global random state: {global_random}"


def test_the_checker_sees_forbidden_imports(tmp_path: Path) -> None:
    """The import walker is not blind: lazy and relative imports are found."""
    sample = RULES / "game.py"
    found = {m for _, m in imports(sample)}
    assert "engine.games.glastonbury.rules.board" in found and "random" in found
    assert not _rules_ok("os") and not _rules_ok("engine.wire") and not _rules_ok("socket")
    assert not _rules_ok("time") and not _rules_ok("pathlib") and _rules_ok("json")


def service_files() -> list[tuple[str, Path]]:
    out = []
    for name, folder in SERVICES.items():
        if folder.is_dir():
            out += [(name, p) for p in sorted(folder.rglob("*.py"))]
    return out


def cross_imports(package: str, path: Path, source: str | None = None) -> list[tuple[int, str]]:
    bad = []
    for line, module in imports(path, source):
        if module.split(".")[0] not in PROJECT_ROOTS or within(module, package):
            continue
        if module == "engine" or any(within(module, shared) for shared in SHARED):
            continue
        if package == "hub" and within(module, "firmware"):
            continue
        bad.append((line, module))
    return bad


@pytest.mark.skipif(not service_files(), reason="no hub/engine.service/dashboard yet")
@pytest.mark.parametrize(
    ("package", "path"), service_files(), ids=lambda x: x if isinstance(x, str) else x.name
)
def test_services_do_not_import_each_others_internals(package: str, path: Path) -> None:
    bad = cross_imports(package, path)
    assert not bad, f"{module_name(path)} imports another package's internals: {bad}"


def test_the_cross_package_checker_catches_violations() -> None:
    where = ROOT / "dashboard" / "example.py"
    source = (
        "from engine.games.glastonbury.rules.game import Game\n"
        "from engine.wire import contract\n"
        "from . import models\n"
        "def lazy():\n"
        "    from hub.tagmap import TagMap\n"
        "    import engine.service.store\n"
        "    from engine import bots\n"
        "    from firmware import protocol\n"
    )
    modules = [m for _, m in cross_imports("dashboard", where, source)]
    assert modules == [
        "hub.tagmap", "hub.tagmap.TagMap", "engine.service.store", "engine.bots",
        "firmware", "firmware.protocol",
    ]  # fmt: skip


# ---------------------------------------------------------------- every package (3)

# What each package may import from the project besides itself. The composition code wires
# the broker, hub, engine, dashboard and bots together: it may import anything, and
# nothing but itself imports it. `engine.app` is the composition root: the `cauldron`
# command, the demo and the score-only count; `engine.bench` holds the benchmarks
# (`cauldron bench …`), which measure every package from outside.
BENCH = "engine.bench"
COMPOSITION = ("engine.app", BENCH)
ALLOWED: dict[str, tuple[str, ...]] = {
    "engine.games.glastonbury.rules": (),
    # The game seam: the interface and registry stand alone; a game's definition adapts
    # its own packages to it.
    "engine.games": (),
    "engine.games.glastonbury": ("engine.games.base", "engine.games.tournament", "engine.wire"),
    "engine.wire": ("engine.games",),
    # A game's bots: its rules, and the tournament statistic every game shares.
    "engine.games.glastonbury.bots": ("engine.games.glastonbury.rules", "engine.games.tournament",
                                      "engine.cli"),
    # Quacks mirrors Glastonbury: its definition, table and breakdown adapt the pure core.
    "engine.games.quacks": ("engine.games.base", "engine.games.tournament",
                            "engine.wire"),  # its table reads GAME_API
    "engine.games.quacks.rules": (),  # pure, like Glastonbury's rules (and not even those)
    "engine.games.quacks.bots": ("engine.games.quacks.rules", "engine.games.tournament"),
    "engine.datadir": (),
    "engine.cli": (),  # CliError only: the command is engine.app.cli
    "engine.games.glastonbury.rules_cli": ("engine.games.glastonbury.rules", "engine.cli"),
    "engine.games.glastonbury.score_cli": ("engine.games.glastonbury.rules", "engine.cli"),
    # doctor checks a venue's store: its schema version and redaction are the store's
    "engine.hosting": (*SHARED, "engine.service.store"),
    "engine.service": SHARED,
    "hub": (*SHARED, "firmware"),
    "dashboard": SHARED,
    # The firmware runs on the Pico; only its CPython tools read the hub's reader layout.
    "firmware": ("hub.layout",),
    "engine": (),  # engine/__init__.py
}


def package_of(module: str) -> str:
    """The longest `ALLOWED`/`COMPOSITION` entry that holds `module`."""
    owners = [p for p in (*ALLOWED, *COMPOSITION) if within(module, p)]
    assert owners, f"{module} belongs to no package of the dependency rule: add it"
    return max(owners, key=len)


def project_files() -> list[Path]:
    return sorted(p for root in PROJECT_ROOTS for p in (ROOT / root).rglob("*.py"))


def bad_imports(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    package = package_of(module_name(path))
    bad = []
    for line, module in imports(path, source):
        if module.split(".")[0] not in PROJECT_ROOTS or module == "engine":
            continue
        if any(within(module, root) for root in COMPOSITION):
            if package not in COMPOSITION:  # nothing imports the composition code
                bad.append((line, module))
            continue
        if package in COMPOSITION or within(module, package):
            continue
        if not any(within(module, allowed) for allowed in ALLOWED[package]):
            bad.append((line, module))
    return bad


@pytest.mark.parametrize("path", project_files(), ids=lambda p: module_name(p))
def test_every_package_imports_only_what_it_may(path: Path) -> None:
    bad = bad_imports(path)
    assert not bad, f"{module_name(path)} ({package_of(module_name(path))}) imports {bad}"


# Not benchmarks: `cauldron readers --bench` measures a table's own readers before it is
# built (hardware/bench-test.md), a tool of the hub's command.
BENCH_NAMED_TOOLS = ("hub.bench_readers",)


def test_benchmark_code_lives_only_in_the_bench_package() -> None:
    """No product module is a benchmark or imports one (`imports_bench`); the benchmarks
    are `engine.bench`'s, reached by `cauldron bench` through importlib."""
    stray = [module_name(p) for p in project_files() if "bench" in p.stem
             and not within(module_name(p), BENCH) and module_name(p) not in BENCH_NAMED_TOOLS]
    assert not stray, f"benchmark modules outside {BENCH}: {stray}; move them there"
    importing = {module_name(p): found for p in project_files()
                 if not any(within(module_name(p), c) for c in COMPOSITION)
                 and (found := imports_bench(p))}
    assert not importing, f"product modules import benchmark code: {importing}"


def imports_bench(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    return [(line, m) for line, m in imports(path, source) if within(m, BENCH)]


def test_the_bench_checker_catches_imports() -> None:
    source = "def lazy():\n    from engine.bench.kit import Figure\n"
    assert imports_bench(ROOT / "hub" / "example.py", source) == [
        (2, "engine.bench.kit"), (2, "engine.bench.kit.Figure")]
    assert bad_imports(ROOT / "hub" / "example.py", source) == [
        (2, "engine.bench.kit"), (2, "engine.bench.kit.Figure")]


def test_the_package_checker_catches_violations() -> None:
    source = (
        "from engine.games.glastonbury.rules.game import Game\n"
        "from engine.service.store import open_store\n"
        "def lazy():\n"
        "    from engine.app.demo.stack import DemoStack\n"
    )
    bots = ROOT / "engine" / "games" / "glastonbury" / "bots" / "example.py"
    assert [m for _, m in bad_imports(bots, source)] == [
        "engine.service.store", "engine.service.store.open_store",
        "engine.app.demo.stack", "engine.app.demo.stack.DemoStack"]
    demo = ROOT / "engine" / "app" / "demo" / "example.py"
    assert bad_imports(demo, source) == []  # the composition code may wire anything


# ---------------------------------------------------------------- hidden state (4)

HIDDEN = {"cauldrons", "pile"}  # and a game's ``recipes`` (every seat's)
# The bots play from their own shadow game and sampled worlds (tests/engine/games/glastonbury/bots/
# test_bots_hidden.py checks they never see a covered card); the dashboard's virtual table
# and the simulated hub hold the physical cards, on `self`.
HIDDEN_OK = ("engine.games.glastonbury.rules", "engine.games.glastonbury.bots")


def hidden_reads(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """``x.cauldrons`` / ``x.pile`` / ``x.recipes`` read from a game (not from ``self``, a
    configuration, a command's args, or the physical layout the simulated hub is asked to
    lay out: `engine.wire.api.RestoreLayout`, for the hub that holds the physical cards)."""
    text = path.read_text(encoding="utf-8") if source is None else source
    found = []
    for node in ast.walk(ast.parse(text)):
        if not (isinstance(node, ast.Attribute) and node.attr in (*HIDDEN, "recipes")):
            continue
        owner = ast.unparse(node.value)
        if node.attr == "recipes" and not owner.endswith("game"):
            continue  # a score sheet's, a form's, a seat view's own recipes
        if owner == "self" or owner.endswith(("config", "form", "saved", "options", "args",
                                              "layout")):
            continue
        found.append((node.lineno, f"{owner}.{node.attr}"))
    return sorted(found)


@pytest.mark.parametrize(
    "path", [p for p in project_files()
             if not any(within(module_name(p), ok) for ok in HIDDEN_OK)],
    ids=lambda p: module_name(p))
def test_nothing_outside_the_rules_reads_hidden_game_state(path: Path) -> None:
    found = hidden_reads(path)
    assert not found, (f"{module_name(path)} reads hidden game state {found}: ask "
                       "engine.games.glastonbury.rules.observer (a view or a narrow question) "
                       "instead")


def test_the_hidden_state_checker_catches_reads() -> None:
    source = ("top = game.cauldrons[0][-1]\n"
              "n = interp.game.pile.size\n"
              "r = self.recipes\n"
              "flag = config.recipes\n"
              "theirs = game.recipes[1]\n")
    assert [w for _, w in hidden_reads(ROOT / "x.py", source)] == [
        "game.cauldrons", "interp.game.pile", "game.recipes"]


def test_the_composition_root_finds_every_command_by_name() -> None:
    """`engine.app.cli` reaches the packages' commands through importlib (names, not
    imports): each name is a module with `register`, and the installed script runs it."""
    import importlib
    import tomllib

    from engine.app.cli import COMMAND_MODULES

    for name in COMMAND_MODULES:
        assert callable(importlib.import_module(name).register), name
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["cauldron"] == "engine.app.cli:main"


# Quacks' hidden state: the fortune deck's order, the seeded rng (so the next draw), and each
# seat's hand and bag. Outside its pure core (engine.games.quacks.rules) it is read through the
# core's observer only (its table and definition included); its bots get a seat view.
QUACKS_HIDDEN = {"deck", "start_deck", "rng", "hand", "bag"}


def quacks_hidden_reads(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """``game.deck`` / ``game.rng`` / ``….players[s].hand`` / ``….bag`` read from a game."""
    text = path.read_text(encoding="utf-8") if source is None else source
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Attribute) and node.attr in QUACKS_HIDDEN:
            owner = ast.unparse(node.value)
            if owner.endswith("game") or ".players[" in owner or owner.startswith("game."):
                found.append((node.lineno, f"{owner}.{node.attr}"))
    return sorted(found)


@pytest.mark.parametrize(
    "path", [p for p in project_files()
             if not within(module_name(p), "engine.games.quacks.rules")],
    ids=lambda p: module_name(p))  # fmt: skip
def test_nothing_outside_quacks_reads_its_hidden_state(path: Path) -> None:
    found = quacks_hidden_reads(path)
    assert not found, f"{module_name(path)} reads Quacks hidden state {found}: use its observer"


def test_the_quacks_hidden_state_checker_catches_reads() -> None:
    source = ("nxt = game.deck[0]\n"
              "r = self.game.rng.random()\n"
              "h = game.players[1].hand\n"
              "mine = view['bag']\n")  # fmt: skip
    assert [w for _, w in quacks_hidden_reads(ROOT / "x.py", source)] == [
        "game.deck", "self.game.rng", "game.players[1].hand"]  # fmt: skip


# ---------------------------------------------------------------- simulation (issue 22)


def backend_names_in(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """String constants naming a reader back-end ("sim", "spi", ...) in a module."""
    from hub.config import BACKENDS

    text = path.read_text(encoding="utf-8") if source is None else source
    return sorted((node.lineno, node.value) for node in ast.walk(ast.parse(text))
                  if isinstance(node, ast.Constant) and node.value in BACKENDS)


@pytest.mark.parametrize("path", sorted((ROOT / "engine" / "service").rglob("*.py")),
                         ids=lambda p: module_name(p))
def test_the_engine_knows_no_reader_backend_by_name(path: Path) -> None:
    """Simulation stays out of the engine: it asks the hub by capability (a back-end that
    lays its table out gets ``hub/cmd/layout``), never by which back-end it is."""
    found = backend_names_in(path)
    assert not found, (f"{module_name(path)} names reader back-ends {found}: ask the hub "
                       "for a capability (HubSnapshot.capabilities) instead")


def test_the_backend_name_checker_catches_a_branch() -> None:
    source = 'if runtime.hub_backend == "sim":\n    pass\nlabel = "simulated"\n'
    assert backend_names_in(ROOT / "x.py", source) == [(1, "sim")]


# ---------------------------------------------------------------- the game seam (5)

GAMES = ROOT / "engine" / "games"
PLATFORM = ("hub", "dashboard", "engine.service", "engine.wire")

# Platform modules that still import a game's own modules, with exactly those imports: they
# are to go through the seam (`GameDefinition`) and this list only shrinks
# (`test_the_seam_exceptions_are_still_needed`). The wire's `GamePublic`/`GameSeat` type the
# default game's views for the dashboard's models (every other game's come from the registry:
# `public_model`, `seat_model`). The engine service and its store speak to games through
# `engine.games.base.Interpreter` only.
NOT_YET_THROUGH_THE_SEAM: dict[str, frozenset[str]] = {
    "engine.wire.contract": frozenset({"engine.games.glastonbury.rules.observer"}),
}
# A game imports no other game's modules: what two games share lives in the seam
# (`engine.games.tournament`: the seat rotation and the Wilson interval). No exception is left.
GAME_CROSS_IMPORTS: dict[str, frozenset[str]] = {}


def game_of(module: str) -> str | None:
    """The game whose package holds ``module`` (``engine.games.<game>…``); None for the
    seam itself (``engine.games``, ``engine.games.base``, a name of the registry)."""
    parts = module.split(".")
    if parts[:2] != ["engine", "games"] or len(parts) < 3:
        return None
    return parts[2] if (GAMES / parts[2]).is_dir() else None


def game_modules_imported(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """(line, module) of every import of a game package's module (a name imported from a
    module counts as that module)."""
    found = []
    for line, module in imports(path, source):
        if game_of(module) is None:
            continue
        if not (ROOT / Path(*module.split("."))).is_dir() and not (
                ROOT / Path(*module.split("."))).with_suffix(".py").is_file():
            module = module.rpartition(".")[0]  # `from m import name`: m is the module
        found.append((line, module))
    return sorted(set(found))


def seam_breaches(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """A platform module's imports of a game's own modules beyond the listed exceptions."""
    allowed = NOT_YET_THROUGH_THE_SEAM.get(module_name(path), frozenset())
    return [(line, m) for line, m in game_modules_imported(path, source) if m not in allowed]


def platform_files() -> list[Path]:
    return [p for p in project_files()
            if any(within(module_name(p), pkg) for pkg in PLATFORM)]


@pytest.mark.parametrize("path", platform_files(), ids=lambda p: module_name(p))
def test_the_platform_knows_games_only_through_the_seam(path: Path) -> None:
    bad = seam_breaches(path)
    assert not bad, (f"{module_name(path)} imports a game's own modules {bad}: use the game's "
                     "definition (engine.games.get(game_id), engine.games.base)")


def test_the_seam_exceptions_are_still_needed() -> None:
    """The exceptions only shrink: an import routed through the seam leaves the list."""
    for module, listed in NOT_YET_THROUGH_THE_SEAM.items():
        path = ROOT / Path(*module.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        found = {m for _, m in game_modules_imported(path)}
        assert listed <= found, f"{module} no longer imports {sorted(listed - found)}: unlist it"


def test_the_seam_checker_refuses_a_game_import() -> None:
    source = ("from engine import games\n"
              "from engine.games import get\n"
              "from engine.games.base import Refused\n"
              "def lazy():\n"
              "    from engine.games.glastonbury.rules.names import seat_name\n"
              "    import engine.games.quacks.rules.game\n"
              "    from engine.games.glastonbury import definition\n")
    for platform in ("hub", "dashboard", "engine/service", "engine/wire"):
        assert [m for _, m in seam_breaches(ROOT / platform / "example.py", source)] == [
            "engine.games.glastonbury.rules.names", "engine.games.quacks.rules.game",
            "engine.games.glastonbury", "engine.games.glastonbury.definition"], platform
    assert seam_breaches(ROOT / "hub" / "example.py", source.split("def lazy")[0]) == []


@pytest.mark.parametrize("path", sorted(GAMES.rglob("*.py")), ids=lambda p: module_name(p))
def test_a_game_imports_no_other_game(path: Path) -> None:
    own = game_of(module_name(path))
    allowed = GAME_CROSS_IMPORTS.get(module_name(path), frozenset())
    bad = [(line, m) for line, m in game_modules_imported(path)
           if game_of(m) not in (None, own) and m not in allowed]
    assert not bad, f"{module_name(path)} imports another game's modules: {bad}"
