"""A small JSON Schema (2020-12) validator for the subset openapi.yaml uses, with local `$ref`s.

Strict on purpose: a keyword it does not know is an error, so a schema can never pass because the
validator silently skipped the part that mattered. `contentMediaType: application/json` with a
`contentSchema` is enforced (JSON Schema only annotates it): geodata is a string holding JSON.
"""

from __future__ import annotations

import json
import re

ANNOTATIONS = {"description", "title", "deprecated", "format", "example", "examples", "default", "summary"}
TYPES = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


class SchemaError(Exception):
    """The schema itself uses something this validator does not implement."""


class ValidationError(AssertionError):
    """The instance does not match the schema; `where` is a JSON-pointer-like location."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where or '/'}: {message}")


def resolve(node, root: dict):
    """`node` with a local `$ref` (`#/a/b`) followed, repeatedly; siblings of `$ref` are dropped."""
    seen = 0
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        if not ref.startswith("#/"):
            raise SchemaError(f"only local references are supported: {ref}")
        node = root
        for part in ref[2:].split("/"):
            key = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or key not in node:
                raise SchemaError(f"unresolvable reference {ref}")
            node = node[key]
        seen += 1
        if seen > 50:
            raise SchemaError(f"reference loop at {ref}")
    return node


def validate(instance, schema, root: dict, where: str = "") -> None:
    """Raises ValidationError unless `instance` matches `schema` (references resolved against `root`)."""
    if schema is True:
        return
    if schema is False:
        raise ValidationError(where, "no value is allowed here")
    if not isinstance(schema, dict):
        raise SchemaError(f"{where}: a schema must be an object or a boolean")
    for keyword, value in schema.items():
        if keyword in ANNOTATIONS or keyword.startswith("x-") or keyword == "contentSchema":
            continue
        check = _KEYWORDS.get(keyword)
        if check is None:
            raise SchemaError(f"{where}: unsupported keyword {keyword!r}")
        check(instance, value, schema, root, where)


def _ref(instance, value, schema, root, where):
    validate(instance, resolve({"$ref": value}, root), root, where)


def _type(instance, value, schema, root, where):
    names = value if isinstance(value, list) else [value]
    if not any(TYPES[name](instance) for name in names):
        raise ValidationError(where, f"{json.dumps(instance)[:80]} is not of type {value}")


def _const(instance, value, schema, root, where):
    if not _equal(instance, value):
        raise ValidationError(where, f"{instance!r} is not {value!r}")


def _enum(instance, value, schema, root, where):
    if not any(_equal(instance, option) for option in value):
        raise ValidationError(where, f"{instance!r} is not one of {value!r}")


def _equal(a, b) -> bool:
    return type(a) is type(b) and a == b or (TYPES["number"](a) and TYPES["number"](b) and a == b)


def _properties(instance, value, schema, root, where):
    if isinstance(instance, dict):
        for name, subschema in value.items():
            if name in instance:
                validate(instance[name], subschema, root, f"{where}/{name}")


def _required(instance, value, schema, root, where):
    if isinstance(instance, dict):
        missing = [name for name in value if name not in instance]
        if missing:
            raise ValidationError(where, f"missing {missing}")


def _additional_properties(instance, value, schema, root, where):
    if isinstance(instance, dict):
        for name in instance:
            if name not in schema.get("properties", {}):
                validate(instance[name], value, root, f"{where}/{name}")


def _count(minimum: bool, kinds):
    def check(instance, value, schema, root, where):
        if isinstance(instance, kinds):
            # Strings count Unicode scalar values (code points), as docs/API.md and PostgreSQL do.
            size = len(instance)
            if (size < value) if minimum else (size > value):
                raise ValidationError(where, f"size {size} is {'below' if minimum else 'above'} {value}")
    return check


def _bound(minimum: bool):
    def check(instance, value, schema, root, where):
        if TYPES["number"](instance) and ((instance < value) if minimum else (instance > value)):
            raise ValidationError(where, f"{instance} is {'below' if minimum else 'above'} {value}")
    return check


def _pattern(instance, value, schema, root, where):
    if isinstance(instance, str) and not re.search(value, instance):
        raise ValidationError(where, f"{instance[:80]!r} does not match {value!r}")


def _prefix_items(instance, value, schema, root, where):
    if isinstance(instance, list):
        for index, (item, subschema) in enumerate(zip(instance, value)):
            validate(item, subschema, root, f"{where}/{index}")


def _items(instance, value, schema, root, where):
    if isinstance(instance, list):
        start = len(schema.get("prefixItems", []))
        for index in range(start, len(instance)):
            validate(instance[index], value, root, f"{where}/{index}")


def _matches(instance, subschema, root, where) -> bool:
    try:
        validate(instance, subschema, root, where)
        return True
    except ValidationError:
        return False


def _any_of(instance, value, schema, root, where):
    if not any(_matches(instance, subschema, root, where) for subschema in value):
        raise ValidationError(where, "matches none of anyOf")


def _one_of(instance, value, schema, root, where):
    matched = sum(_matches(instance, subschema, root, where) for subschema in value)
    if matched != 1:
        raise ValidationError(where, f"matches {matched} of oneOf, not exactly 1")


def _all_of(instance, value, schema, root, where):
    for subschema in value:
        validate(instance, subschema, root, where)


def _not(instance, value, schema, root, where):
    if _matches(instance, value, root, where):
        raise ValidationError(where, "matches the schema under not")


def _content(instance, value, schema, root, where):
    if value != "application/json":
        raise SchemaError(f"{where}: unsupported contentMediaType {value}")
    if isinstance(instance, str) and "contentSchema" in schema:
        try:
            decoded = json.loads(instance)
        except ValueError:
            raise ValidationError(where, f"{instance[:80]!r} is not JSON text") from None
        validate(decoded, schema["contentSchema"], root, f"{where}(decoded)")


_KEYWORDS = {
    "$ref": _ref, "type": _type, "const": _const, "enum": _enum,
    "properties": _properties, "required": _required, "additionalProperties": _additional_properties,
    "minProperties": _count(True, dict), "maxProperties": _count(False, dict),
    "minItems": _count(True, list), "maxItems": _count(False, list),
    "minLength": _count(True, str), "maxLength": _count(False, str),
    "minimum": _bound(True), "maximum": _bound(False), "pattern": _pattern,
    "prefixItems": _prefix_items, "items": _items,
    "anyOf": _any_of, "oneOf": _one_of, "allOf": _all_of, "not": _not,
    "contentMediaType": _content,
}
