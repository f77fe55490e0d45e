"""Helpers shared by several test modules (never imported from a test module)."""
