"""Arista EOS simulator: eAPI, config sessions with commit timers, flash rollback files."""
