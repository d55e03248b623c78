"""Cisco NX-OS simulator: NX-API, checkpoints and rollback, SSH + SCP, configure replace with a commit timeout."""
