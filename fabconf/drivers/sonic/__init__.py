"""SONiC: CONFIG_DB through the Generic Config Updater over SSH (docs/reference/sonic.md)."""
