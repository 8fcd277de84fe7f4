"""Mosquitto's password file, written by Python so no password is ever on a command line.

Mosquitto 2 reads ``user:$7$<iterations>$<salt>$<hash>`` lines: PBKDF2-HMAC-SHA512 with a
12-byte salt and a 64-byte hash, both base64 (what ``mosquitto_passwd`` writes).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

ITERATIONS = 101  # mosquitto_passwd's default for $7$


def hash_password(password: str, salt: bytes | None = None,
                  iterations: int = ITERATIONS) -> str:
    salt = salt if salt is not None else secrets.token_bytes(12)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations, 64)
    return (f"$7${iterations}${base64.b64encode(salt).decode()}"
            f"${base64.b64encode(digest).decode()}")


def verify_password(stored: str, password: str) -> bool:
    """Does a ``$7$`` hash line's hash match ``password``? (Other formats: no.)"""
    parts = stored.split("$")
    if len(parts) != 5 or parts[1] != "7":
        return False
    try:
        iterations = int(parts[2])
        salt, digest = base64.b64decode(parts[3]), base64.b64decode(parts[4])
    except ValueError:
        return False
    mine = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations, len(digest))
    return hmac.compare_digest(mine, digest)


def parse_passwd(text: str) -> dict[str, str]:
    """``{user: hash}`` of a password file (comments and blank lines skipped)."""
    users: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and ":" in line:
            user, _, stored = line.partition(":")
            users[user] = stored
    return users


def merge_passwd(existing: str, accounts: dict[str, str]) -> str:
    """The password file with ``accounts`` (user -> password) set; other users (other
    tables of a venue) are kept, and a hash that already matches is kept as it is."""
    users = parse_passwd(existing)
    for user, password in accounts.items():
        if not verify_password(users.get(user, ""), password):
            users[user] = hash_password(password)
    return "".join(f"{user}:{stored}\n" for user, stored in users.items())


def main_conf_settings(text: str) -> set[str]:
    """The option names a Mosquitto main config sets (to avoid setting them twice)."""
    names = set()
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            names.add(line.split()[0])
    return names


def include_dirs(text: str) -> list[str]:
    return [line.split(None, 1)[1].strip() for line in text.splitlines()
            if line.strip().startswith("include_dir ") and len(line.split()) > 1]
