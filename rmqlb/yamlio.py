"""The one YAML reading (check configs, ``simulate --config``/``--rooms``): PyYAML's safe
loader, refusing a duplicate key in any mapping as :func:`rmqlb.fileio.load_json` refuses
one in a JSON object (PyYAML itself keeps the last silently).

Imported only by the commands that read YAML (PyYAML is not a light import).
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import ComposerError

__all__ = ["UniqueKeyLoader", "safe_load"]

_MERGE_TAG = "tag:yaml.org,2002:merge"


class UniqueKeyLoader(yaml.SafeLoader):
    """:class:`yaml.SafeLoader` that refuses a key given twice in one mapping (a
    :class:`~yaml.MarkedYAMLError` marking the second, naming the key and the first's line).

    >>> yaml.safe_load("a: 1\\na: 2")
    {'a': 2}
    >>> safe_load("a: 1\\nb: 2")
    {'a': 1, 'b': 2}
    >>> try:
    ...     safe_load("a: 1\\na: 2")
    ... except yaml.MarkedYAMLError as exc:
    ...     print(exc.problem, "- at line", exc.problem_mark.line + 1)
    duplicate key 'a' in a mapping (first at line 1) - at line 2
    """

    def compose_mapping_node(self, anchor: Any) -> yaml.MappingNode:
        node = super().compose_mapping_node(anchor)
        first: dict[tuple[str, str], yaml.Node] = {}
        for key, _ in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE_TAG:
                continue  # a complex key, or "<<" (merging may repeat keys by design)
            seen = first.get((key.tag, key.value))
            if seen is not None:
                shown = key.value if len(key.value) <= 80 else key.value[:80] + "…"
                raise ComposerError(
                    None,
                    None,
                    f"duplicate key {shown!r} in a mapping "
                    f"(first at line {seen.start_mark.line + 1})",
                    key.start_mark,
                )
            first[(key.tag, key.value)] = key
        return node


def safe_load(text: str) -> Any:
    """``yaml.safe_load`` by :class:`UniqueKeyLoader`."""
    return yaml.load(text, Loader=UniqueKeyLoader)
