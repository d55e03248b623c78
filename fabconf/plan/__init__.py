"""Planning a fabric: sizing a Clos, writing its inventory, onboarding racks and pods, cabling docs."""
