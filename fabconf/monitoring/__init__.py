"""``fabconf monitoring``: Prometheus alerting rules, an inventory textfile, scrape targets and a Grafana dashboard
for the fabric, generated from the same intent as its configuration (``names``: the exporters' metric names and
their sources, in one table; ``thresholds``: the alert thresholds and timing as intent keys; ``rules``,
``inventory``, ``targets``, ``dashboard``: the outputs)."""
