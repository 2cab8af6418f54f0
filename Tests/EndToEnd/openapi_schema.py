"""openapi.yaml's schemas applied with a maintained JSON Schema validator: `jsonschema` (Debian's python3-jsonschema
or PyPI's, which scripts/test installs), dialect 2020-12 as OpenAPI 3.1 and 3.2 specify, `$ref`s resolved in the spec.

JSON Schema only annotates `contentMediaType`/`contentSchema`; here `contentSchema` is enforced for JSON text,
since geodata is a string holding JSON and what it holds is the contract.
"""

from __future__ import annotations

import json
import warnings

import jsonschema
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaViolation


class ValidationError(AssertionError):
    """The instance does not match the schema; names where, in the instance, and why."""


def _content_schema(validator, content_schema, instance, schema):
    if schema.get("contentMediaType") != "application/json" or not isinstance(instance, str):
        return
    try:
        decoded = json.loads(instance)
    except ValueError:
        yield SchemaViolation(f"{instance[:80]!r} is not JSON text")
        return
    yield from validator.descend(decoded, content_schema)


Validator = jsonschema.validators.extend(Draft202012Validator, {"contentSchema": _content_schema})


def resolve(node, root: dict):
    """An OpenAPI object with a local reference object (`$ref: '#/a/b'`) followed, repeatedly."""
    for _ in range(50):
        if not (isinstance(node, dict) and "$ref" in node):
            return node
        ref = node["$ref"]
        assert ref.startswith("#/"), f"only local references are used: {ref}"
        node = root
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
    raise AssertionError(f"reference loop at {node}")


def _validator(schema, root: dict):
    """A validator for `schema` whose `#/...` references resolve in `root`, the whole spec."""
    Validator.check_schema(schema)
    # RefResolver is in every jsonschema 4 (Debian 12 has 4.10); from 4.18 on it is deprecated in favour of the
    # `referencing` registries, which resolve a schema's own `#/...` in that schema, not in the spec around it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return Validator(schema, resolver=jsonschema.RefResolver.from_schema(root))


def validate(instance, schema, root: dict, where: str = "") -> None:
    """Raises ValidationError unless `instance` matches `schema`, whose references point into `root`."""
    errors = sorted(_validator(schema, root).iter_errors(instance), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        path = "/".join(str(part) for part in first.absolute_path)
        raise ValidationError(f"{where}/{path}: {first.message}")
