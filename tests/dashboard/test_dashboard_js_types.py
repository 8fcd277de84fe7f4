"""The pages' JS gets its types from the schemas (dashboard.jsdoc): the committed
``dashboard/types/wire.js`` is exactly what the schemas give (no drift), and ``tsc
--checkJs`` finds no error in the pages with those types (``make lint`` runs it too)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from dashboard.jsdoc import PAGE_MODELS, TYPES_FILE, SchemaShapeError, render, ts_type

ROOT = Path(__file__).resolve().parents[2]
TSC = ROOT / "node_modules" / ".bin" / "tsc"


def test_the_committed_types_are_what_the_schemas_give() -> None:
    assert TYPES_FILE.read_text(encoding="utf-8") == render(), (
        "dashboard/types/wire.js is stale: run python -m dashboard.jsdoc")


def test_every_page_model_has_its_typedef() -> None:
    text = render()
    for model in PAGE_MODELS:
        assert f"}} {model.__name__} */" in text


@pytest.mark.parametrize(("schema", "typed"), [
    ({"type": "string"}, "string"),
    ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "(number | null)"),
    ({"enum": ["a", "b"]}, '"a" | "b"'),
    ({"type": "array", "items": {"$ref": "#/$defs/Prompt"}}, "Array<Prompt>"),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, "Object<string, number>"),
    ({"type": "object", "properties": {"a": {"type": "boolean"}, "b-c": {"const": 1}},
      "required": ["a"]}, '{a: boolean, "b-c"?: 1}'),
    ({"description": "anything"}, "any"),
])
def test_schemas_become_jsdoc_types(schema: dict[str, object], typed: str) -> None:
    assert ts_type(schema) == typed


def test_a_schema_it_cannot_say_is_an_error_not_a_guess() -> None:
    with pytest.raises(SchemaShapeError, match="cannot type"):
        ts_type({"type": "frobnicate"})


def test_the_pages_type_check_with_the_wire_types() -> None:
    if not TSC.exists():
        pytest.skip("TypeScript is not installed here: `make lint` installs it (npm ci)")
    node = shutil.which("node")
    assert node is not None, "node is needed to run tsc"
    done = subprocess.run([node, str(TSC), "-p", str(ROOT / "dashboard" / "tsconfig.json")],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
