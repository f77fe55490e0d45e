"""The formats hz asserts, the same for defaults, input values and output answers.

JSON Schema 2020-12 makes ``format`` an annotation unless a validator chooses to assert it;
hz asserts a fixed list, independent of which optional packages happen to be installed
(jsonschema asserts more formats when ``rfc3339-validator``, ``idna``, … are present, which
would make a contract's meaning depend on the machine). Every other format is an annotation.
"""

from __future__ import annotations

import functools
import ipaddress
import re

from jsonschema import Draft202012Validator, FormatChecker

from hz.runtime.jsonschema.ecma import RegexError, compile_ecma, remaining

#: Asserted with jsonschema's own checks (standard library only).
_FROM_JSONSCHEMA = ("date", "idn-email", "ipv4", "ipv6", "uuid")
#: Every format hz asserts; ``regex`` is ECMA-262 (``hz.runtime.jsonschema.ecma``), ``email``
#: RFC 5321's Mailbox (jsonschema only asks for an ``@``).
ASSERTED = tuple(sorted((*_FROM_JSONSCHEMA, "email", "regex")))

_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LOCAL = re.compile(rf'(?:{_ATOM}(?:\.{_ATOM})*|"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*")')
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def _is_email(instance: object) -> bool:
    """RFC 5321 ``Mailbox``: a dot-atom or quoted local part, ``@``, a host name or an
    address literal (``[127.0.0.1]``, ``[IPv6:::1]``)."""
    if not isinstance(instance, str):
        return True
    local, at, domain = instance.rpartition("@")
    if not at or len(local) > 64 or not _LOCAL.fullmatch(local):
        return False
    if domain.startswith("[") and domain.endswith("]"):
        literal = domain[1:-1]
        try:
            if literal.startswith("IPv6:"):
                ipaddress.IPv6Address(literal[5:])
            else:
                ipaddress.IPv4Address(literal)
        except ValueError:
            return False
        return True
    labels = domain.split(".")
    return len(domain) <= 253 and all(_LABEL.fullmatch(label) for label in labels)


def _is_regex(instance: object) -> bool:
    if isinstance(instance, str):
        remaining(instance)  # compiling takes regex time too
        compile_ecma(instance)
    return True


@functools.cache
def format_checker() -> FormatChecker:
    base = Draft202012Validator.FORMAT_CHECKER
    checker = FormatChecker(formats=())
    for name in _FROM_JSONSCHEMA:
        checker.checkers[name] = base.checkers[name]
    checker.checkers["regex"] = (_is_regex, RegexError)
    checker.checkers["email"] = (_is_email, ())
    return checker
