"""GPU hosts with ConnectX NICs over SSH: a NAPALM-shaped driver of fabconf's own."""
