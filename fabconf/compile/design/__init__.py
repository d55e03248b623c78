"""Device data from the model: switches, GPU hosts, their QoS in each platform's terms, host networking."""
