"""LEAPP's ``leapp.leapp_graph`` package path: ``datatypes`` and ``traced_node``."""
