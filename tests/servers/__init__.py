"""Fake protocol servers on 127.0.0.1 for backend tests: scriptable, with a billing log."""
