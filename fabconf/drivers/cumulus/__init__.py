"""NVIDIA Cumulus Linux 5.x over the NVUE REST API: a NAPALM-shaped driver of fabconf's own."""
