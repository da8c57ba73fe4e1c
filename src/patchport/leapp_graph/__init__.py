"""LEAPP's ``leapp.leapp_graph`` package path (only ``datatypes`` is provided)."""
