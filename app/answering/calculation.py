"""The calculator step: a small local model copies values well and does arithmetic badly (on the
manuals set it answered 6 of 23 questions that combine or compute), so for a question that needs
a computation it writes only the arithmetic over values copied from the sources, Python computes
it, and the answer is written with the result in front of the model.
"""

from __future__ import annotations

import ast
import datetime
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

# The instruction that replaces the answer instruction in the calculation request.
# No worked example: the 0.5B model copied one ("(80 - 60) * 2") into most of its answers.
CALCULATION_PROMPT = (
    "Do not answer yet. Write only the arithmetic that answers the question, on one line: the "
    "numbers or dates (as YYYY-MM-DD) that the sources give, with + - * / between them."
)
MAX_CALCULATION_TOKENS = 48

_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_SYMBOLS = str.maketrans({"×": "*", "÷": "/", "−": "-", "–": "-", "＋": "+", "－": "-"})
# Characters an expression may hold once dates are numbers: anything else is prose, not math.
_EXPRESSION = re.compile(r"[\d\s.+\-*/()]+")
_OPERATORS: dict[type[ast.AST], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


@dataclass(frozen=True, slots=True)
class Calculation:
    expression: str  # as the model wrote it, dates included
    value: float

    @property
    def result(self) -> str:
        return f"{self.value:g}" if self.value != int(self.value) else str(int(self.value))

    @property
    def line(self) -> str:
        """What the answering prompt is told."""
        return f"Calculated from the sources: {self.expression} = {self.result}"


def calculate(written: str) -> Calculation | None:
    """The first line of `written` that is arithmetic with at least one operator, computed;
    None when there is none (the model answered in words, or copied a single value).

    A date minus a date is a number of days. The result is a magnitude: the questions this step
    serves ask "how many", and the model often subtracts the other way round."""
    for line in written.translate(_SYMBOLS).splitlines():
        expression = line.split("=")[0].strip().strip("`").strip()  # "2015 - 1994 = 21"
        if (value := _evaluate(expression)) is not None:
            return Calculation(expression, abs(value))
    return None


def _evaluate(expression: str) -> float | None:
    numeric = _DATE.sub(_day_number, expression)
    if not numeric or not _EXPRESSION.fullmatch(numeric):
        return None
    try:
        tree = ast.parse(numeric, mode="eval")
    except SyntaxError:
        return None
    if not isinstance(tree.body, ast.BinOp):
        return None  # a single value: nothing was calculated
    try:
        return _value(tree.body)
    except (ZeroDivisionError, OverflowError, ValueError):
        return None


def _value(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_value(node.left), _value(node.right))
    raise ValueError("not arithmetic")


def _day_number(match: re.Match[str]) -> str:
    try:
        return str(datetime.date(*(int(part) for part in match.groups())).toordinal())
    except ValueError:
        return "?"  # not a real date: the line is refused
