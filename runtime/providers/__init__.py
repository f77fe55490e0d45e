"""Capability providers: what fetches an input's value before the session (``protocol``)."""
