"""Third-party internals behind one door (STYLE 22): outside a library's compat module, hz's
code (compiler/, runtime/, hz/) uses no private name of a library.

Four shapes are found. Three are read from the source: an import of a private module or name of
a library (``from referencing._core import Resolver``), a call of a parent class's private
method (``super()._persist_job_status(...)``), and an attribute ``x._name`` where ``_name`` is
defined by no code of hz (``validator._resolver``; hz's own ``self._lock`` or ``doc._skip_ws``
pass). The fourth is found by importing every module: a method of an hz class that overrides a
private method of a library's class (``_monitor_side_tasks`` in a subclass of procrastinate's
``Worker``). A module named ``compat.py`` (one per library, in the package that is its only
consumer) is where such uses live, each with a test that fails when upstream changes it; the few
others are listed in ``ALLOWED`` with their reason.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FOLDERS = ("compiler", "runtime", "hz")

#: Private uses outside a compat module, each with the reason it stays where it is.
ALLOWED = {
    # libyaml's parser: PyYAML exposes it as yaml.CParser only together with its own
    # constructor and resolver, which hz replaces (YAML 1.2 core scalars, positions).
    "compiler/load/loader.py imports yaml._yaml": "PyYAML's libyaml binding, imported under try",
    # Documented under jinja2.Undefined in Jinja's API docs despite the underscore.
    "compiler/render/sandbox.py reads ._fail_with_undefined_error": "Jinja's documented API",
    # os._exit is the standard library's documented way for a forked child to end without
    # running its parent's clean-up (atexit, buffered files).
    "compiler/fanout.py reads ._exit": "the standard library's os._exit, in a forked child",
}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_library(module: str) -> bool:
    top = module.split(".")[0]
    return top != "hz" and top not in sys.stdlib_module_names


def _is_compat(path: str) -> bool:
    return Path(path).name == "compat.py"


def hz_names(sources: Iterable[tuple[str, str]]) -> set[str]:
    """Every name hz's own code defines: functions, classes, module and class variables,
    ``self.x``/``cls.x`` attributes. A compat module's names are the libraries', not hz's."""
    names: set[str] = set()
    for path, source in sources:
        if _is_compat(path):
            continue
        tree = ast.parse(source)
        scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef))]
        for scope in scopes:
            for node in scope.body:
                if isinstance(node, ast.Assign):
                    names.update(t.id for t in node.targets if isinstance(t, ast.Name))
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    names.add(node.target.id)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("self", "cls")
            ):
                names.add(node.attr)
    return names


def private_uses(path: str, source: str, ours: set[str]) -> Iterator[str]:
    """The private uses of a library the source of ``path`` shows (none in a compat module)."""
    if _is_compat(path):
        return
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_library(alias.name) and any(map(_is_private, alias.name.split("."))):
                    yield f"{path} imports {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if not _is_library(node.module):
                continue
            if any(map(_is_private, node.module.split("."))):
                yield f"{path} imports {node.module}"
            for alias in node.names:
                if _is_private(alias.name):
                    yield f"{path} imports {node.module}.{alias.name}"
        elif isinstance(node, ast.Attribute) and _is_private(node.attr):
            parent = node.value
            if (
                isinstance(parent, ast.Call)
                and isinstance(parent.func, ast.Name)
                and parent.func.id == "super"
            ):
                yield f"{path} calls super().{node.attr}"
            elif node.attr not in ours:
                yield f"{path} reads .{node.attr}"


def private_overrides(classes: Iterable[type]) -> Iterator[str]:
    """Methods of hz's classes that override a private method of a library's class."""
    for cls in classes:
        if cls.__module__.endswith(".compat"):
            continue
        for name, value in vars(cls).items():
            method = inspect.isfunction(value) or isinstance(
                value, staticmethod | classmethod | property
            )
            if not (method and _is_private(name)):
                continue
            for base in cls.__mro__[1:]:
                if _is_library(base.__module__) and name in vars(base):
                    where = f"{base.__module__}.{base.__qualname__}"
                    yield f"{cls.__module__}.{cls.__qualname__} overrides {where}.{name}"
                    break


def _sources() -> list[tuple[str, str]]:
    return [
        (str(path.relative_to(REPO)), path.read_text(encoding="utf-8"))
        for folder in FOLDERS
        for path in sorted((REPO / folder).rglob("*.py"))
    ]


def _hz_classes() -> list[type]:
    import hz.ci
    import hz.cli
    import hz.compiler
    import hz.runtime

    classes: list[type] = []
    for package in (hz.compiler, hz.runtime, hz.cli, hz.ci):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            module = importlib.import_module(info.name)
            classes.extend(
                value
                for value in vars(module).values()
                if inspect.isclass(value) and value.__module__ == module.__name__
            )
    return classes


def test_library_internals_are_used_only_in_compat_modules() -> None:
    sources = _sources()
    ours = hz_names(sources)
    found = {use for path, source in sources for use in private_uses(path, source, ours)}
    found |= set(private_overrides(_hz_classes()))
    assert {
        "not in a compat module": sorted(found - ALLOWED.keys()),
        "allowed, but no longer there": sorted(ALLOWED.keys() - found),
    } == {"not in a compat module": [], "allowed, but no longer there": []}


PLANTED = """\
from referencing._core import Resolver
from jsonschema import _utils
import yaml._yaml

class Late(Worker):
    async def _persist_job_status(self, *args):
        await super()._persist_job_status(*args)

def follow(validator, ref):
    return validator._resolver.lookup(ref), validator._ours
"""


def test_the_guard_reports_each_shape_planted_outside_a_compat_module() -> None:
    sources = [*_sources(), ("runtime/planted.py", PLANTED)]
    ours = hz_names(sources) | {"_ours"}  # as if hz defined it
    assert sorted(private_uses("runtime/planted.py", PLANTED, ours)) == [
        "runtime/planted.py calls super()._persist_job_status",
        "runtime/planted.py imports jsonschema._utils",
        "runtime/planted.py imports referencing._core",
        "runtime/planted.py imports yaml._yaml",
        "runtime/planted.py reads ._resolver",
    ]
    assert list(private_uses("runtime/planted/compat.py", PLANTED, ours)) == []


def test_the_guard_reports_an_override_of_a_library_private_method() -> None:
    from procrastinate.worker import Worker

    async def _persist_job_status(self: Worker, *args: object) -> None:
        pass

    def overriding(module: str) -> type:
        body = {"_persist_job_status": _persist_job_status, "_ours": lambda self: None}
        return type("Planted", (Worker,), {**body, "__module__": module})

    planted = "hz.runtime.planted"
    assert list(private_overrides([overriding(planted)])) == [
        f"{planted}.Planted overrides procrastinate.worker.Worker._persist_job_status"
    ]
    assert list(private_overrides([overriding(f"{planted}.compat")])) == []
