"""The Jinja2 environment prompts render in: a sandbox where input values are only data.

Three rules on top of Jinja's ``SandboxedEnvironment``:

- Values have no Python methods. ``obj.name`` on a mapping is the item ``name`` (an input or
  key called ``items`` is that value, not ``dict.items``); on any other JSON value it is
  undefined. Filters do what methods would (``| upper``, ``| items``, ``| join``).
- Nothing depends on chance: ``lipsum`` and the ``random`` filter are gone (validate
  reports them as HZ503/HZ504), so a packet is the same on every render.
- Sizes are checked before the work is done: integer arguments to calls and filters, powers,
  products, concatenations, ``join``/``replace``/``indent`` results and printf widths. What
  still slips through meets the child process's limits (``hz.compiler.render.bound``).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from jinja2 import Environment, StrictUndefined, pass_context, pass_environment
from jinja2.exceptions import SecurityError
from jinja2.runtime import Context, Macro
from jinja2.sandbox import SandboxedEnvironment

from hz.runtime.artifacts.packet_limits import MAX_PROMPT_BYTES

#: The largest integer a call or a filter parameter may take (Jinja caps range() at this too).
MAX_INT_ARG = 100_000
#: Powers and products of integers stop at this many bits of result (about 30,000 digits).
MAX_INT_BITS = 100_000
#: Names that would make a packet differ from one render to the next.
NONDETERMINISTIC_GLOBALS = frozenset({"lipsum"})
NONDETERMINISTIC_FILTERS = frozenset({"random", "shuffle"})
#: Filters whose integer arguments are sizes (widths, counts), not data.
_SIZE_FILTERS = frozenset({"center", "indent", "truncate", "wordwrap", "batch", "slice", "round"})
#: Filters whose calls are checked before they run.
_GUARDED_FILTERS = _SIZE_FILTERS | {"join", "replace", "format"}
#: Values from JSON: for these, attribute access never reaches a Python method.
_DATA = (str, int, float, list, tuple, type(None))
#: Filters to suggest for a method call on a value, by the value's type.
_FILTERS_FOR = {
    "dict": "e.g. | items, | dictsort, | length",
    "str": "e.g. | upper, | replace, | trim, | format",
    "list": "e.g. | join, | sort, | length",
    "tuple": "e.g. | join, | sort, | length",
    "int": "e.g. | string, | round",
    "float": "e.g. | string, | round",
    "bool": "e.g. | string",
    "NoneType": "e.g. | default",
}
#: printf conversions: flags, then a width and a precision that may each be ``*``.
_PRINTF = re.compile(r"%(?:\([^)]*\))?[#0 +\-]*(\*|\d+)?(?:\.(\*|\d+))?")


def _refuse(message: str) -> Exception:
    return SecurityError(message)


def _check_int(value: Any, what: str) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT_ARG:
        raise _refuse(f"{what} {value:,} is larger than {MAX_INT_ARG:,}")


def _check_size(size: int, what: str) -> None:
    if size > MAX_PROMPT_BYTES:
        raise _refuse(f"{what} would be larger than the prompt cap (1 MiB)")


def _check_printf(fmt: str, args: Any) -> None:
    """Refuse printf formatting whose widths and precisions (written, or ``*`` taken from
    the arguments) could make the result larger than the prompt cap."""
    total = len(fmt)
    for width, precision in _PRINTF.findall(fmt):
        for number in (width, precision):
            if number.isdigit():
                _check_int(int(number), "a format width or precision of")
                total += int(number)
            elif number == "*":  # the width is the next argument: any large one is refused
                for arg in args if isinstance(args, tuple | list) else (args,):
                    _check_int(arg, "a format width or precision of")
    _check_size(total, "the formatted text")


def _join(value: Any, d: str = "", attribute: Any = None) -> tuple[list[Any], int]:
    items = list(value)
    size = sum(len(x) if isinstance(x, str) else 32 for x in items)
    return items, size + len(str(d)) * max(len(items) - 1, 0)


def _check_filter(name: str, value: Any, rest: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Refuse a call of filter ``name`` whose result would be too large; the value to filter
    (``join`` takes its items once, as a list, to count them)."""
    if name in _SIZE_FILTERS:  # other filters' arguments are data: any number
        for arg in [*rest, *kwargs.values()]:
            _check_int(arg, f"the {name} filter's argument")
    if name == "join":
        items, size = _join(value, *rest, **kwargs)
        _check_size(size, "the joined text")
        return items
    if name == "replace" and len(rest) >= 2 and isinstance(value, str):
        old, new = str(rest[0]), str(rest[1])
        hits = value.count(old) if old else len(value) + 1
        _check_size(len(value) + hits * max(len(new) - len(old), 0), "the replaced text")
    if name == "indent" and isinstance(value, str):
        width = rest[0] if rest else kwargs.get("width", 4)
        pad = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
        _check_size(len(value) + (value.count("\n") + 1) * pad, "the indented text")
    if name == "format" and isinstance(value, str):
        _check_printf(value, rest)
    return value


def _guarded_filter(name: str, plain: Environment) -> Callable[..., Any]:
    """Filter ``name`` with its sizes checked first. ``plain`` holds Jinja's own filter, and
    calls it as the compiled template would (passing the context, the evaluation context or
    the environment it asks for)."""

    @pass_context
    def guarded(context: Context, value: Any, *rest: Any, **kwargs: Any) -> Any:
        value = _check_filter(name, value, rest, kwargs)
        return plain.call_filter(name, value, rest, kwargs, context=context)

    return guarded


def _attr_filter(env: SandboxedEnvironment, obj: Any, name: str) -> Any:
    return env.getattr(obj, name)  # Jinja's own attr filter would reach dict methods


def _not_json(value: Any) -> Any:
    from jinja2 import Undefined

    if isinstance(value, Undefined):
        # [inputs.x.typo] is as undefined as inputs.x.typo: the render error, not "[Undefined]".
        value._fail_with_undefined_error()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _finalize(value: Any) -> Any:
    """Print values the JSON way: null, true, false, and containers as JSON."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (dict, list, tuple)):
        try:
            return json.dumps(value, ensure_ascii=False, default=_not_json)
        except (TypeError, ValueError):
            return value  # holds a non-JSON value (a macro's result, a cycler): as Python
    return value


class Sandbox(SandboxedEnvironment):
    """Jinja's sandbox where values are data (see the module docstring)."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self) -> None:
        super().__init__(
            undefined=StrictUndefined,
            autoescape=False,
            keep_trailing_newline=True,
            loader=None,
            finalize=_finalize,
        )
        for name in NONDETERMINISTIC_GLOBALS:
            self.globals.pop(name, None)
        for name in NONDETERMINISTIC_FILTERS:
            self.filters.pop(name, None)
        #: Callables whose integer arguments are data, not sizes.
        self.data_makers = tuple(self.globals[n] for n in ("dict", "namespace", "cycler", "joiner"))
        self.filters["attr"] = pass_environment(_attr_filter)
        # The guarded filters call Jinja's own through a copy of this environment that still
        # has them (so they see this sandbox's settings and checks, but not the guards).
        plain = self.overlay()
        plain.filters = dict(self.filters)
        for name in _GUARDED_FILTERS & self.filters.keys():
            self.filters[name] = _guarded_filter(name, plain)

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, Mapping) and attribute in obj:
            return obj[attribute]
        if attribute.startswith("_") or not isinstance(obj, (Mapping, *_DATA)):
            return super().getattr(obj, attribute)  # internals: refused by the sandbox
        if hasattr(obj, attribute):  # a method: say what to write instead
            kind = "dict" if isinstance(obj, Mapping) else type(obj).__name__
            hint = (
                f"'{kind} object' has no attribute {attribute!r} "
                f"(values are data without methods: use a filter, {_FILTERS_FOR[kind]})"
            )
            return self.undefined(hint=hint, obj=obj, name=attribute)
        return self.undefined(obj=obj, name=attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(obj, (Mapping, *_DATA)):
            try:
                data: Any = obj  # any subscript may fail: caught below
                return data[argument]
            except (TypeError, LookupError):
                if isinstance(argument, str):
                    return self.getattr(obj, argument)
                return self.undefined(obj=obj, name=argument)
        return super().getitem(obj, argument)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        # A macro is template code, timed by the deadline; dict() and namespace() take data.
        if not isinstance(__obj, Macro) and __obj not in __self.data_makers:
            name = getattr(__obj, "__name__", "a function").removeprefix("safe_")
            for arg in [*args, *kwargs.values()]:
                _check_int(arg, f"{name}() argument")
        return super().call(__context, __obj, *args, **kwargs)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        ints = all(isinstance(x, int) and not isinstance(x, bool) for x in (left, right))
        if operator == "**" and ints:
            if abs(right) > 1000:
                raise _refuse("exponent larger than 1000 is not allowed")
            if abs(left).bit_length() * right > MAX_INT_BITS:
                raise _refuse(f"a power with more than {MAX_INT_BITS:,} bits is not allowed")
        if operator == "*":
            if ints and left.bit_length() + right.bit_length() > MAX_INT_BITS:
                raise _refuse(f"a product of more than {MAX_INT_BITS:,} bits is not allowed")
            seq, times = (left, right) if isinstance(right, int) else (right, left)
            sized = isinstance(seq, str | list | tuple) and isinstance(times, int)
            if sized and len(seq) * times > MAX_PROMPT_BYTES:
                raise _refuse("repetition larger than the prompt cap (1 MiB)")
        if operator == "+" and all(isinstance(x, str | list | tuple) for x in (left, right)):
            _check_size(len(left) + len(right), "the concatenation")
        if operator == "%" and isinstance(left, str):
            _check_printf(left, right)
        return super().call_binop(context, operator, left, right)


@functools.cache
def environment() -> Sandbox:
    return Sandbox()
