"""Compile and render one template in this process, under a deadline: the render itself.

It runs inside the bounded child (``hz.compiler.render.child``), or in-process where there are
no child limits. Whatever goes wrong is a ``Failed`` outcome with a rule code, never a
traceback; only a failure of hz itself (or ``SystemExit``) escapes.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any

from jinja2.exceptions import SecurityError, TemplateSyntaxError, UndefinedError

from hz.compiler.render.outcome import Failed, Finished, Rendered
from hz.compiler.render.sandbox import environment
from hz.compiler.rules.registry import HZ707, HZ708, HZ709
from hz.runtime.artifacts.packet_limits import MAX_PROMPT_BYTES

#: Extra address space the render may take on top of what its process holds before it starts.
MEMORY_HEADROOM = 512 * 1024 * 1024
#: The template's own name in Jinja tracebacks, to find its frames.
TEMPLATE_NAME = "<template>"
OUT_OF_MEMORY = (
    f"refused by the template sandbox: rendering needs more than "
    f"{MEMORY_HEADROOM // (1024 * 1024)} MiB of memory"
)


class RenderTimeout(Exception):
    pass


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Stop template code that runs past ``seconds``.

    Nested loops over ``range`` or a large input can spin for hours without producing a
    byte. A line tracer on the template's own frames checks the clock every few thousand
    lines (so the failure has a template line); other code runs untraced.
    """
    end = time.monotonic() + seconds
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        if count % 4096 == 0 and time.monotonic() > end:
            raise RenderTimeout
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename == TEMPLATE_NAME else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        yield
    finally:
        sys.settrace(previous)


def template_line(error: BaseException) -> int | None:
    line = getattr(error, "lineno", None)
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == TEMPLATE_NAME:
            line = tb.tb_lineno  # the innermost template frame is where it failed
        tb = tb.tb_next
    return line if isinstance(line, int) else None


def generate(template: str, values: dict[str, Any], seconds: float) -> Finished:
    """Compile and render. Compiling belongs inside the bounds too: Jinja folds constant
    expressions at compile time, running filters such as ``{{ 'a' | upper }}`` there."""
    chunks: list[str] = []
    size = 0
    try:
        with deadline(seconds):
            compiled = environment().from_string(template)
            for chunk in compiled.generate(inputs=values):
                size += len(chunk.encode("utf-8", "surrogatepass"))
                if size > MAX_PROMPT_BYTES:
                    message = (
                        f"the rendered prompt is larger than 1 MiB ({MAX_PROMPT_BYTES:,} bytes)"
                    )
                    return Failed(HZ709, message)
                chunks.append(chunk)
    except TemplateSyntaxError as e:
        return Failed(HZ707, f"template syntax error: {e.message}", e.lineno)
    except RenderTimeout as e:
        message = f"rendering took longer than {seconds:g} s: the template loops too much"
        return Failed(HZ707, message, template_line(e))
    except SecurityError as e:
        return Failed(HZ708, f"refused by the template sandbox: {e}", template_line(e))
    except MemoryError as e:
        return Failed(HZ708, OUT_OF_MEMORY, template_line(e))
    except UndefinedError as e:
        return Failed(HZ707, f"undefined: {e}", template_line(e))
    except Exception as e:  # the template is the user's code: any failure is theirs
        message = f"template failed: {type(e).__name__}: {e}"
        return Failed(HZ707, message, template_line(e))
    return Rendered("".join(chunks))
