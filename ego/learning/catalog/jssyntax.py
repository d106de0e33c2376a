"""Whether a tool's JavaScript parses, read without a browser: ``ego validate``'s syntax check.

The tool runs as the cache's Call evaluates it, ``'(' + source + '\\n)'``, so that is the text
parsed, with tree-sitter's JavaScript grammar (modern syntax, and an error node where the
parse fails). It catches what a browser's parser would refuse as a syntax error before any
browser is involved; what only the engine checks (an ``await`` where none may be, a
duplicate ``let``) is left to the run, which names the line too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["syntax_problem"]

_PARSER: Any = None
# What the normaliser puts before a module's code (``export default``) on the first line.
_MODULE_PREFIX = "(() => { "


def _parser() -> Any:
    global _PARSER
    if _PARSER is None:
        # Imported on first use: only ego validate and a pack build parse without a browser.
        import tree_sitter_javascript
        from tree_sitter import Language, Parser

        _PARSER = Parser(Language(tree_sitter_javascript.language()))
    return _PARSER


def _first_error(node: Node) -> Node | None:
    if node.type == "ERROR" or node.is_missing:
        return node
    if not node.has_error:
        return None
    for child in node.children:
        found = _first_error(child)
        if found is not None:
            return found
    return node


def syntax_problem(source: str, expression: str) -> str | None:
    """Where the tool's code does not parse, in one phrase; None when it parses.

    Args:
        source: the tool file's text (for the positions).
        expression: the same as one function expression (``function_expression(source)``).
    """
    text = "(" + expression.rstrip("\n") + "\n)"
    tree = _parser().parse(text.encode("utf-8"))
    error = _first_error(tree.root_node)
    if error is None:
        return None
    row, column = error.start_point
    line_bytes = text.encode("utf-8").split(b"\n")[row]
    line_text = line_bytes.decode("utf-8", errors="replace")
    column = len(line_bytes[:column].decode("utf-8", errors="replace"))
    # What a person sees there: the text from the error on (for a missing piece, what
    # stands where it was expected).
    near = (error.text or b"").decode("utf-8", errors="replace").strip()
    near = (near or line_text[column:].strip() or "the end").splitlines()[0][:40]
    if row == 0:
        # The "(" and a module's own prefix share the first line with the source.
        prefix = 1
        if expression.startswith(_MODULE_PREFIX) and not source.lstrip().startswith("("):
            prefix += len(_MODULE_PREFIX)
        column = max(0, column - prefix)
    return f"a syntax error at line {row + 1}, column {column + 1}, near {near!r}"
