"""Contracts the tests share, and the project layout ``hz compile`` reads."""

from __future__ import annotations

from pathlib import Path

#: One string input, the ``Read`` tool: what most ``hz run`` tests run.
GREET = """\
hz:
  contract: 1
  name: greet
  timeout: 30s
  agent:
    tools: [Read]
    max_usd: 0.5
  inputs:
    who:
      schema: {type: string}
contract: |
  Be brief.
prompt: |
  Say hi to {{ inputs.who }}.
"""

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

#: ``TOPIC.format(name=..., rule=...)``: the contracts of a compile project.
TOPIC = """\
hz:
  contract: 1
  name: {name}
  timeout: 2m
  agent:
    tools: [Read]
    max_usd: 0.5
  inputs:
    topic:
      schema: {{type: string}}
contract: |
  {rule}
prompt: |
  Write about {{{{ inputs.topic }}}}.
"""


def project(root: Path, *names: str) -> Path:
    """A project at ``root`` (an ``hz.toml``) with one ``contracts/NAME.yaml`` per name."""
    (root / "contracts").mkdir(parents=True)
    (root / "hz.toml").touch()
    for name in names:
        write(root, name)
    return root


def write(root: Path, name: str, rule: str = "Be brief.") -> None:
    text = TOPIC.format(name=name, rule=rule)
    (root / "contracts" / f"{name}.yaml").write_text(text, encoding="utf-8")
