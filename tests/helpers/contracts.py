"""Contracts the tests share, and the project layout ``hz compile`` reads."""

from __future__ import annotations

from pathlib import Path


def contract(
    name: str = "greet",
    *,
    timeout: str = "30s",
    max_usd: float | str = 0.5,
    tools: tuple[str, ...] = ("Read",),
    inputs: tuple[str, ...] = ("who",),
    rule: str = "Be brief.",
    prompt: str = "Say hi to {{ inputs.who }}.",
    comment: str = "",
) -> str:
    """The text of a contract: string ``inputs``, the ``Read`` tool by default, ``max_usd`` at
    line 7 (8 with a ``comment``, 6 without ``tools``)."""
    head = f"# {comment}\n" if comment else ""
    agent = f"    tools: [{', '.join(tools)}]\n" if tools else ""
    declared = "".join(f"    {i}:\n      schema: {{type: string}}\n" for i in inputs)
    return (
        f"{head}hz:\n  contract: 1\n  name: {name}\n  timeout: {timeout}\n"
        f"  agent:\n{agent}    max_usd: {max_usd}\n"
        + (f"  inputs:\n{declared}" if inputs else "")
        + f"contract: |\n  {rule}\nprompt: |\n  {prompt}\n"
    )


#: One string input, the ``Read`` tool: what most ``hz run`` tests run.
GREET = contract()

#: A JSON answer checked against a schema.
LISTING = """\
hz:
  contract: 1
  name: listing
  timeout: 30s
  agent:
    max_usd: 0.5
  inputs:
    body:
      schema: {type: string}
  output:
    format: json
    schema:
      type: object
      required: [items]
      properties:
        items: {type: array, items: {type: string}}
contract: Answer in JSON.
prompt: "{{ inputs.body }}"
"""

#: Two inputs, one with a default, and a loop in the prompt: what ``hz render`` tests render.
GREET_TIMES = """\
hz:
  contract: 1
  name: greet
  timeout: 60
  agent:
    max_usd: 0.5
  inputs:
    who:
      schema: {type: string}
    times:
      schema: {type: integer, minimum: 1}
      default: 1
contract: |
  Be kind.
prompt: |
  {% for i in range(inputs.times) %}Hello {{ inputs.who }}!
  {% endfor %}
"""

#: The smallest valid contract without inputs declared (its prompt names one: a finding).
TINY = """\
hz:
  contract: 1
  name: tiny
  timeout: 45
  agent: {max_usd: 5}
contract: Rules.
prompt: Hello {{ inputs.who }}.
"""


def project(root: Path, *names: str) -> Path:
    """A project at ``root`` (an ``hz.toml``) with one ``contracts/NAME.yaml`` per name."""
    (root / "contracts").mkdir(parents=True)
    (root / "hz.toml").touch()
    for name in names:
        write(root, name)
    return root


def write(root: Path, name: str, rule: str = "Be brief.") -> None:
    prompt = "Write about {{ inputs.topic }}."
    text = contract(name, timeout="2m", inputs=("topic",), rule=rule, prompt=prompt)
    (root / "contracts" / f"{name}.yaml").write_text(text, encoding="utf-8")
