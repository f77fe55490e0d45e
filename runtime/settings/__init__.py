"""How a configuration table's keys are declared: the settings-model kit (``model``:
``TableSettings``, ``Expect``, the value types) and the tables' names and built-in
defaults (``keys``). Below the runners, whose settings are such models
(``hz.runtime.runners.settings``: a runner's keys), and below the layered configuration
(``hz.runtime.config``), which asks the runners for their keys."""
