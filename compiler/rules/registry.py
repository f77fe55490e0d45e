"""The rule registry: every code hz reports, with its title and severity, in one table.

Code refers to a rule by its constant (``HZ101``), so a code that is not registered cannot be
written; ``hz explain CODE``, docs/rules.md and the SARIF rule titles are generated from this
table and the explanation of each rule in ``compiler/data/rules/CODE.md`` (a test holds its
heading to the table).
The runtime, which cannot import the compiler, reports the project-file rules (HZ8xx) with
its own literals; a test checks that those are registered too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from hz.compiler.diagnostics import Severity


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    title: str
    severity: Severity = "error"
    #: For ``hz migrate``'s report, whose lines say no severity: the kind of line the code is
    #: printed on (``mapped:``, ``decide:``), listed in place of the severity.
    printed: str = ""

    @property
    def label(self) -> str:
        """The title as listed: "Declared input never used by the prompt (warning)",
        "Migrated: a namespace carried into the name (mapped:)"."""
        if self.printed:
            return f"{self.title} ({self.printed})"
        return self.title + (" (warning)" if self.severity == "warning" else "")

    @property
    def heading(self) -> str:
        return f"{self.code}: {self.label}"

    @property
    def docs(self) -> str:
        """The explanation: why, a bad example, the fixed one (Markdown, from ``CODE.md``)."""
        return explanation_file(self.code).partition("\n\n")[2]


def explanation_file(code: str) -> str:
    """``compiler/data/rules/CODE.md``: the heading ``# CODE: title``, then the explanation.
    A test holds its heading to the table."""
    from importlib import resources

    path = resources.files("hz.compiler") / "data" / "rules" / f"{code}.md"
    return path.read_text(encoding="utf-8")


RULES: dict[str, Rule] = {}


def _rule(code: str, title: str, severity: Severity = "error", printed: str = "") -> str:
    RULES[code] = Rule(code, title, severity, printed)
    return code


# Loading a file
HZ001: Final = _rule("HZ001", "Cannot read file")
HZ002: Final = _rule("HZ002", "File is not UTF-8 text")
HZ003: Final = _rule("HZ003", "File is larger than 256 KiB")
HZ004: Final = _rule("HZ004", "YAML syntax error")
HZ005: Final = _rule("HZ005", "Anchors and aliases are not allowed")
HZ006: Final = _rule("HZ006", "Tags are not allowed")
HZ007: Final = _rule("HZ007", "Duplicate key")
HZ008: Final = _rule("HZ008", "Key is not a string")
HZ009: Final = _rule("HZ009", "Top level is not a mapping")
HZ010: Final = _rule("HZ010", "Empty document")
HZ011: Final = _rule("HZ011", "More than one document")
HZ012: Final = _rule("HZ012", "Nesting deeper than 32 levels")
HZ013: Final = _rule("HZ013", "More than 10,000 nodes")
HZ014: Final = _rule("HZ014", "No contracts found")
HZ015: Final = _rule("HZ015", "Frontmatter is never closed")
HZ016: Final = _rule("HZ016", "Markdown file without an hz: frontmatter")

# The contract schema
HZ100: Final = _rule("HZ100", "Contract format version newer than this hz")
HZ101: Final = _rule("HZ101", "Unknown key")
HZ102: Final = _rule("HZ102", "Missing required key")
HZ103: Final = _rule("HZ103", "Wrong type")
HZ104: Final = _rule("HZ104", "Invalid value")
HZ105: Final = _rule("HZ105", "Heinzelmännchen contract")

# Migrating a Heinzelmännchen contract (`hz migrate`'s report)
HZ170: Final = _rule(
    "HZ170",
    "Migrated: a key carried over",
    "warning",
    "mapped:; decide: for a schedule's time zone",
)
HZ171: Final = _rule(
    "HZ171", "Migrated: an operation left to the command provider", "warning", "decide:"
)
HZ172: Final = _rule(
    "HZ172", "Migrated: arguments hz's operation does not take", "warning", "decide:"
)
HZ173: Final = _rule("HZ173", "Cannot migrate: not exactly one named output")
HZ174: Final = _rule("HZ174", "Migrated: a key hz has no home for", "warning", "mapped: or decide:")
HZ175: Final = _rule("HZ175", "Migrated: a required budget or timeout added", "warning", "decide:")
HZ176: Final = _rule("HZ176", "Cannot migrate: a template placeholder left")
HZ177: Final = _rule("HZ177", "Migrated: a namespace carried into the name", "warning", "mapped:")
HZ178: Final = _rule("HZ178", "Cannot migrate: an hz: block it cannot edit")
HZ179: Final = _rule("HZ179", "Cannot migrate: a name that is not an hz name")
HZ180: Final = _rule("HZ180", "Cannot migrate: a name another contract has")
HZ181: Final = _rule("HZ181", "Cannot migrate: a top-level key hz reads instead of the body")

# The body of a Markdown contract
HZ111: Final = _rule("HZ111", "Required section missing")
HZ112: Final = _rule("HZ112", "Empty section")
HZ113: Final = _rule("HZ113", "Section given twice")
HZ114: Final = _rule("HZ114", "Body names an undeclared input", "warning")
HZ115: Final = _rule("HZ115", "Declared input the body never names", "warning")
HZ116: Final = _rule("HZ116", "HTML comment never closed")
HZ117: Final = _rule("HZ117", "Body nested too deeply to read")

# Schedules
HZ160: Final = _rule("HZ160", "Invalid cron expression")
HZ161: Final = _rule("HZ161", "Cron expression matches no date")
HZ162: Final = _rule("HZ162", "Unknown time zone")
HZ163: Final = _rule("HZ163", "Jitter longer than an hour")

# Refused agent choices
HZ201: Final = _rule("HZ201", "Refused: `hz.agent.runner`")
HZ202: Final = _rule("HZ202", "Refused: `hz.agent.model`")
HZ203: Final = _rule("HZ203", "Refused: `hz.agent.effort`")
HZ204: Final = _rule("HZ204", "Refused: `hz.agent.max_turns`")

# Limits
HZ301: Final = _rule("HZ301", "Timeout is not a duration")
HZ302: Final = _rule("HZ302", "Timeout outside 1 second … 24 hours")
HZ303: Final = _rule("HZ303", "Budget not greater than 0")
HZ304: Final = _rule("HZ304", "Budget over the ceiling")

# Input and output schemas
HZ401: Final = _rule("HZ401", "Input schema is not valid JSON Schema")
HZ402: Final = _rule("HZ402", "Input default fails its schema")
HZ403: Final = _rule("HZ403", "Output schema is not valid JSON Schema")
HZ404: Final = _rule("HZ404", "Output schema without format json")

# Inputs read through a capability operation
HZ410: Final = _rule("HZ410", "Unknown operation in `read`")
HZ411: Final = _rule("HZ411", "Arguments that fail the operation's argument schema")
HZ412: Final = _rule("HZ412", "Window that is invalid or the operation does not take")
HZ413: Final = _rule("HZ413", "Input with both `read` and `default`")
HZ414: Final = _rule("HZ414", "Input schema the operation's result cannot meet")
HZ415: Final = _rule("HZ415", "`args` or `window` without `read`")
HZ416: Final = _rule("HZ416", "Option that does not fit the input's read")
HZ417: Final = _rule("HZ417", "More than 16 inputs read through an operation")

# Publishes (HZ42x: where the draft goes; HZ41x are the inputs' reads)
HZ420: Final = _rule("HZ420", "Unknown publish target")
HZ421: Final = _rule("HZ421", "Publish arguments do not fit the target")
HZ422: Final = _rule("HZ422", "Draft the publish target cannot take")
HZ423: Final = _rule("HZ423", "Template error in a publish argument")

# The prompt template
HZ501: Final = _rule("HZ501", "Template syntax error")
HZ502: Final = _rule("HZ502", "Reference to an undeclared input")
HZ503: Final = _rule("HZ503", "Undefined name in the template")
HZ504: Final = _rule("HZ504", "Unknown filter or test in the template")
HZ505: Final = _rule("HZ505", "Include, import or extends in the template")
HZ506: Final = _rule("HZ506", "Declared input never used by the prompt", "warning")

# Compiling
HZ601: Final = _rule("HZ601", "Two contracts with the same name")
HZ602: Final = _rule("HZ602", "Compiled job is stale")
HZ603: Final = _rule("HZ603", "Compiled job is missing")
HZ604: Final = _rule("HZ604", "Job without a contract")
HZ610: Final = _rule("HZ610", "Unknown upstream job")
HZ611: Final = _rule("HZ611", "Jobs depend on each other in a cycle")
HZ612: Final = _rule("HZ612", "Upstream draft cannot satisfy the input's schema")

# Rendering
HZ701: Final = _rule("HZ701", "Inputs file cannot be used")
HZ702: Final = _rule("HZ702", "Input value fails its schema")
HZ703: Final = _rule("HZ703", "Required input has no value")
HZ704: Final = _rule("HZ704", "Undeclared input")
HZ705: Final = _rule("HZ705", "Inputs larger than 8 MiB")
HZ706: Final = _rule("HZ706", "Bad --input argument")
HZ707: Final = _rule("HZ707", "Template error while rendering")
HZ708: Final = _rule("HZ708", "Refused by the template sandbox")
HZ709: Final = _rule("HZ709", "Rendered prompt larger than 1 MiB")
HZ710: Final = _rule("HZ710", "Inputs given for a packet")
HZ711: Final = _rule("HZ711", "Read input neither fetched nor given")
HZ712: Final = _rule("HZ712", "Rendered publish argument does not fit the target")

# Fetching inputs through providers (reported by the runtime, hz.runtime.providers.protocol)
HZ720: Final = _rule("HZ720", "Capability not bound to a provider")
HZ721: Final = _rule("HZ721", "Provider cannot be used as configured")
HZ722: Final = _rule("HZ722", "Provider's service answered with an error")
HZ723: Final = _rule("HZ723", "Rate limited past the provider's ceiling")
HZ724: Final = _rule("HZ724", "Provider's answer is not what the operation promises")
HZ725: Final = _rule("HZ725", "Provider's answer is larger than its cap")
HZ726: Final = _rule("HZ726", "Provider did not answer within its timeout")
HZ727: Final = _rule("HZ727", "Arguments refused by the operator's settings")
HZ728: Final = _rule("HZ728", "since-last-success passed over a run or is empty", "warning")
HZ730: Final = _rule("HZ730", "No completed upstream draft to read")
HZ731: Final = _rule("HZ731", "Newest upstream draft unreadable: an older one read", "warning")

# A project hz.toml
HZ801: Final = _rule("HZ801", "Execution key in a project hz.toml")
HZ802: Final = _rule("HZ802", "Unknown key in a project hz.toml")
HZ803: Final = _rule("HZ803", "Project hz.toml cannot be read or is not valid TOML")
HZ804: Final = _rule("HZ804", "Invalid value in a project hz.toml")

# Checks against the runners of this machine
HZ901: Final = _rule("HZ901", "Tool no runner accepts", "warning")
