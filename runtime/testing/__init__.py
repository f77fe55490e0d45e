"""Test support for plugin authors: the runner conformance kit (``conformance``) and its
hostile fake agent (``fake_agent``), and the provider conformance kit (``providers``)."""
