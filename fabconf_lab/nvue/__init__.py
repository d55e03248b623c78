"""NVIDIA Cumulus Linux simulator: NVUE REST revisions, apply and confirm, the nv CLI over SSH."""
