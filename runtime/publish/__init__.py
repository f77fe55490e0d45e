"""Publishing a completed run's draft where its contract asked and the operator allowed.

``policy`` (the operator's ``[publish]`` against a packet's publishes, before the session),
``draft`` (the draft as each target takes it: caps, neutralised mentions and hidden HTML, JSON
checked), ``targets`` (the publishers: ``github``, ``files``, ``webhook``, ``command``) and
``engine`` (each publish a ledger step, written once: docs/publishing.md).
"""
