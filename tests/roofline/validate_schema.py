"""Validates a results.json against results/schema-v1.json (JSON Schema 2020-12).

usage: validate_schema.py SCHEMA RESULTS
"""
import json
import sys

import jsonschema


def main() -> int:
    schema_path, results_path = sys.argv[1], sys.argv[2]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    with open(results_path, encoding="utf-8") as f:
        results = json.load(f)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(results))
    for e in errors:
        print(f"{results_path}: /{'/'.join(map(str, e.absolute_path))}: {e.message}")
    if not results["kernels"] or not results["ceilings"]:
        print(f"{results_path}: fixture has no kernels or ceilings; nothing was validated")
        return 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
