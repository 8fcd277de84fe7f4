"""Every command the README's hosting steps and the hosting code print works as printed
(issue 19, items 2 and 3), in a `setup --root` rehearsal with a real Mosquitto on Debian's
stock main config and the three services running as their units start them.

As on the Pi, each command is looked up on a plain PATH (``/usr/local/bin`` of the
rehearsal's root first, then the system's; never the venv's own ``bin``), with no
``CAULDRON_KEYS_DIR`` and an empty home: whatever a command needs must come from what setup
wrote. ``sudo`` is dropped (the tests run as root or as the rehearsal's owner), and the
printed ``/etc``, ``/var/lib`` paths are read under the rehearsal's root. A command that
would act (setup, enroll, starting a service...) runs with ``--help``; the ones that only
look (readers, doctor, games, grep PIN) run for real against the running table."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
from pathlib import Path

from test_setup_doctor import (  # noqa: F401  (fixtures)
    CAULDRON,
    Table,
    cauldron,
    services,
    table,
    wait_doctor_ok,
)

CHECKOUT = Path(__file__).resolve().parents[2]
# Where the hosting code prints commands for a host (messages, hints, "Next:" lines).
CODE = ["engine/hosting/setup.py", "engine/hosting/cli.py", "engine/hosting/doctor.py",
        "hub/cli.py", "engine/wire/mqtt.py", "hub/backends/pcsc.py", "hub/backends/spi.py",
        "engine/service/cli.py"]
# Sub-commands that change something or run a service: shown with --help.
ACTING = {"setup", "enroll", "hub", "engine", "dashboard", "demo", "count", "bench",
          "selfplay", "tournament", "schema"}
SYSTEM = {"apt", "apt-get", "git", "python3", "systemctl", "journalctl", "raspi-config",
          "date", "timedatectl", "chmod", "chown", "chgrp", "dmesg", "reboot", "mosquitto",
          "pcsc_scan"}
PLACEHOLDER = re.compile(r"<|…|\.\.\.|\bURL\b|YYYY|\bFILE\b|\bDIR\b|\|")


def _spans(text: str) -> list[str]:
    """Command lines in Markdown or source text: fenced blocks' lines and `inline spans`
    (which may wrap over lines, and over an f-string's pieces in code)."""
    found = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        found += [line.strip() for line in block.splitlines() if line.strip()]
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    for span in re.findall(r"`([^`]+)`", text, re.S):
        found.append(" ".join(span.replace('"\n', " ").replace('f"', " ").split()))
    return found


def _is_command(span: str) -> bool:
    words = span.split()
    if words[:1] == ["sudo"]:
        words = words[1:]
    if len(words) < 2:  # `cauldron` alone names the program, it is no command
        return False
    return (words[0] == "cauldron" or words[0].endswith("/bin/cauldron")
            or (span.startswith("sudo ") and words[0] in SYSTEM | {"grep"}))


def readme_commands() -> list[str]:
    text = (CHECKOUT / "README.md").read_text()
    start = text.index("## Hosting a real table")
    end = text.index("## A venue: many tables")
    return [s for s in _spans(text[start:end]) if _is_command(s)]


def _strings(source: str) -> list[str]:
    """The program's string constants, f-strings with ``{}`` where a value goes (texts
    it prints; adjacent literals are one constant)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr):
            found.append("".join(str(v.value) if isinstance(v, ast.Constant) else "{}"
                                 for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append(node.value)
    return found


def code_commands() -> list[str]:
    """Commands in the hosting code's texts; those with a value filled in at run time
    ({}) are checked where they are printed (setup's and doctor's output)."""
    found = []
    for name in CODE:
        for text in _strings((CHECKOUT / name).read_text()):
            found += [s for s in re.findall(r"`([^`]+)`", text)
                      if _is_command(s) and "{}" not in s]
    return found


def printed_commands(output: str) -> list[str]:
    return [s for s in _spans(output) if _is_command(s)]


class Runner:
    def __init__(self, root: Path, home: Path) -> None:
        self.root = root
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("CAULDRON_") and k not in ("VIRTUAL_ENV",)}
        self.env.update(PATH=f"{root}/usr/local/bin:/usr/local/bin:/usr/bin:/bin",
                        HOME=str(home), XDG_DATA_HOME=str(home / "data"))
        home.mkdir(parents=True, exist_ok=True)  # the cwd too: nothing lands in the checkout
        self.ran: dict[str, str] = {}

    def words(self, command: str) -> list[str] | None:
        """The command as the rehearsal runs it; None for a system command (apt, git,
        systemctl...: not this project's to run) or a placeholder (`<the Pi's address>`)."""
        if PLACEHOLDER.search(command):
            return None
        words = shlex.split(command)
        if words[0] == "sudo":
            words = words[1:]
        if words[0] in SYSTEM:
            return None
        if words[0].endswith("/cauldron") and words[0] != "cauldron":
            assert words[0] == "/opt/cauldron-table/.venv/bin/cauldron", command
            words[0] = "cauldron"  # the README's install path is the Pi's
        mapped = []
        for word in words:
            if word == "/tmp/table":  # the README's rehearsal root: this one
                word = str(self.root)
            for prefix in ("/etc/cauldron", "/var/lib/cauldron", "/etc/mosquitto"):
                if word.startswith(prefix) and not word.startswith(str(self.root)):
                    word = f"{self.root}{word}"
            mapped.append(word)
        words = mapped
        if words[0] != "cauldron":
            return words  # grep PIN ...
        verb = words[1] if len(words) > 1 else ""
        if verb == "doctor" and "--root" not in words:
            words += ["--root", str(self.root), "--skip", "clock"]
        if verb in ("games", "readers", "enroll") and not {
                "--config", "--store", "--data-dir", "--backend"} & set(words):
            # the installed config they read by themselves: the Pi's /etc/cauldron
            name = "engine" if verb == "games" else "hub"
            words += ["--config", f"{self.root}/etc/cauldron/{name}.toml"]
        acting = verb in ACTING or (verb == "games" and len(words) > 2 and (
            words[2] in ("import", "export", "migrate", "owners") or "--add" in words))
        # Hardware this rehearsal has not (a PC/SC reader, a Pico, the Pi's SPI bus).
        acting = acting or bool({"pcsc", "serial", "spi"} & set(words))
        if acting and "--help" not in words:
            words.append("--help")
        return words

    def run(self, command: str) -> str | None:
        """Why the command failed as printed, or None."""
        words = self.words(command)
        if words is None:
            return None
        key = shlex.join(words)
        if key in self.ran:
            return None
        timeout = 120.0
        try:
            done = subprocess.run(words, env=self.env, capture_output=True, text=True,
                                  cwd=self.env["HOME"],
                                  timeout=timeout if words[1:2] != ["readers"] else 20,
                                  stdin=subprocess.DEVNULL, check=False)
            out, code = done.stdout + done.stderr, done.returncode
        except FileNotFoundError:
            self.ran[key] = "command not found"
            return f"{command}: {words[0]}: command not found"
        except subprocess.TimeoutExpired as exc:  # `readers` redraws until stopped
            raw = (exc.stdout or b"") + (exc.stderr or b"")
            out, code = raw.decode() if isinstance(raw, bytes) else raw, 0
        self.ran[key] = out
        bad = [m for m in ("Traceback", "unrecognized arguments", "no command key",
                           "command not found", "invalid choice") if m in out]
        if "--help" in words:
            ok = code == 0 and not bad
        elif words[1:2] == ["doctor"]:
            ok = "Table 'club-1'" in out and not bad
        elif words[1:2] == ["readers"]:
            ok = "hub hub-club-1 (sim back-end" in out and not bad
        else:
            ok = code == 0 and not bad
        return None if ok else f"{command}\n  ran: {key}\n  exit {code}: {out[-800:]}"


def test_readme_and_code_name_the_commands_checked() -> None:
    """The collection itself: the host steps' commands are found (a change of wording
    must not leave this test checking nothing)."""
    readme = readme_commands()
    for wanted in ("sudo cauldron doctor", "sudo cauldron enroll --config /etc/cauldron/hub.toml",
                   "sudo cauldron readers --config /etc/cauldron/hub.toml",
                   "sudo grep PIN /etc/cauldron/secrets/dashboard.env",
                   "sudo /opt/cauldron-table/.venv/bin/cauldron setup"):
        assert wanted in readme, readme
    assert "sudo cauldron setup" in code_commands()


def test_every_printed_command_works_as_printed(table: Table, services: None,  # noqa: F811
                                                tmp_path: Path) -> None:
    assert wait_doctor_ok(table.root).returncode == 0
    runner = Runner(table.root, tmp_path / "home")
    # What setup prints on a re-run, and doctor with a fault that names commands.
    again = cauldron("setup", "--root", str(table.root), "--yes")
    assert again.returncode == 0, again.stderr
    commands = readme_commands() + code_commands() + printed_commands(again.stdout)
    (table.root / "var/lib/cauldron/keys/club-1.cmd.json").chmod(0o644)
    faulty = cauldron("doctor", "--root", str(table.root), "--timeout", "10", timeout=120)
    commands += printed_commands(faulty.stdout)
    (table.root / "var/lib/cauldron/keys/club-1.cmd.json").chmod(0o640)
    failures = [why for c in commands if (why := runner.run(c)) is not None]
    assert not failures, "\n\n".join(failures)
    ran = " | ".join(runner.ran)
    # The ones the issue found broken ran for real, through the PATH setup made.
    assert f"cauldron readers --config {table.root}/etc/cauldron/hub.toml" in ran, ran
    assert f"cauldron doctor --root {table.root}" in ran
    assert len(runner.ran) >= 10, ran


def test_setup_links_cauldron_onto_the_path(table: Table) -> None:  # noqa: F811
    link = table.root / "usr/local/bin/cauldron"
    assert link.is_symlink() and os.readlink(link) == CAULDRON
    again = cauldron("setup", "--root", str(table.root), "--yes")
    assert f"unchanged {link}" in again.stdout and "nothing to change" in again.stdout


# Every text a host or a player may read: the code's messages, and the docs.
DOCS = ["README.md", "hub/README.md", "firmware/README.md", "hardware"]
METAVAR = re.compile(r"^[A-Z][A-Z0-9_]{0,7}$")  # N, FILE, URL, DIR, TABLE...


def _everywhere() -> list[tuple[str, str]]:
    """(where, span) for every `cauldron ...` span in the project's code and docs."""
    found: list[tuple[str, str]] = []
    for package in ("engine", "hub", "dashboard"):
        for path in sorted((CHECKOUT / package).rglob("*.py")):
            for text in _strings(path.read_text()):
                found += [(str(path.relative_to(CHECKOUT)), " ".join(s.split()))
                          for s in re.findall(r"`([^`]+)`", text)]
    for name in DOCS:
        where = CHECKOUT / name
        for path in sorted(where.rglob("*.md")) if where.is_dir() else [where]:
            found += [(str(path.relative_to(CHECKOUT)), s) for s in _spans(path.read_text())]
    return [(w, s) for w, s in found if _names_cauldron(s)]


def _names_cauldron(span: str) -> bool:
    words = span.split()
    if words[:1] == ["sudo"]:
        words = words[1:]
    return (len(words) >= 2 and (words[0] == "cauldron" or words[0].endswith("/bin/cauldron"))
            and re.match(r"^[a-z]", words[1]) is not None)


def _argv(span: str, value: str) -> list[str] | None:
    """The span as argv for the parser: a usage line's ``[optional]`` parts kept, ``a|b``
    its first choice, placeholders (``{}`` a value filled in at run time, ``<...>``,
    ``…``, a METAVAR) given ``value``. None: a family of commands (``games ...``)."""
    text = re.sub(r"\s+#.*$", "", span).replace("\\|", "|")
    text = re.sub(r"<[^>]*>", "PH", text).replace("…", "PH").replace("{}", "PH")
    text = text.replace("[", " ").replace("]", " ")
    words = shlex.split(text)
    if words[0] == "sudo":
        words = words[1:]
    if "..." in words or "/" in words[2 if len(words) > 2 else 1]:
        return None
    argv = []
    for word in words[1:]:
        word = word.split("|")[0] if "|" in word and not word.startswith("|") else word
        argv.append(value if METAVAR.match(word) or word == "PH" else word.replace("PH", value))
    return argv


def _parse_error(argv: list[str]) -> str | None:
    from engine.app.cli import build_parser

    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
            build_parser().parse_args(argv)
    except SystemExit as exc:
        if exc.code != 0 and "the following arguments are required" not in said.getvalue():
            return said.getvalue().strip().splitlines()[-1]  # (a command named, not run)
    return None


def test_every_cauldron_command_printed_anywhere_parses() -> None:
    """Every `cauldron ...` in a message or a doc parses with the real CLI: no option
    misspelt or gone, no sub-command renamed (values a message fills in at run time are
    tried as a number and as a word)."""
    found = _everywhere()
    assert len(found) > 150, len(found)  # the collection finds them
    failures = []
    for where, span in sorted(set(found)):
        tries = [_argv(span, value) for value in ("1", "x")]
        errors = [_parse_error(argv) for argv in tries if argv is not None]
        if errors and all(errors):
            failures.append(f"{where}: `{span}`: {errors[-1]}")
    assert not failures, "\n".join(failures)
