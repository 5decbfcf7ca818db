"""Tests of pipeline_kit.backends (fake servers live in tests/servers)."""
