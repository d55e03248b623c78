"""The CLI platforms (EOS, NX-OS): NAPALM's drivers wrapped with hier_config staging."""
