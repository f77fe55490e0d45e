"""Test support for runner authors: the conformance kit (``conformance``) and its hostile
fake agent (``fake_agent``)."""
