"""fabconf's own NAPALM-shaped drivers, for platforms NAPALM has no driver for (Cumulus NVUE, Linux hosts)."""
