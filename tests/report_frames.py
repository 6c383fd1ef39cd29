"""Stack frames in a streamhaz JSON report, for the scripts that check findings' source lines
(tests/golden/check_golden.py, tests/gpu/check_stacks.py)."""


def frames(node):
    """Every {file, line} object anywhere in a JSON document."""
    if isinstance(node, dict):
        if "file" in node and "line" in node:
            yield node
        for v in node.values():
            yield from frames(v)
    elif isinstance(node, list):
        for v in node:
            yield from frames(v)
