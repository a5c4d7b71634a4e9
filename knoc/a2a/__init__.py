"""The A2A protocol as knoc publishes it: the extensions knoc defines, the
capability contract, the target-neutral card fields, and `targets/`, one
module per A2A target behind one `Target` interface, found by name."""
