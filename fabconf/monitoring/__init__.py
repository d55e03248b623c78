"""``fabconf monitoring``: Prometheus alerting rules, an inventory textfile and a Grafana dashboard for the fabric,
generated from the same intent as its configuration (``names``: the exporters' metric names, in one place;
``thresholds``: the alert thresholds as intent keys; ``rules``, ``inventory``, ``dashboard``: the outputs)."""
