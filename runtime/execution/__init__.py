"""One run of a packet: resolve and bind the runner, the pre-run gate (``policy``), the
run itself (``execute``), the check of its draft (``output_check``); and ``hz doctor``
(``doctor``), which makes the same checks ahead of a run."""
