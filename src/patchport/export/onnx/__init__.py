"""ONNX writing: the direct fx->ONNX translator, its proto writer, and the fixes applied to
what torch.onnx writes (decompositions before export, ONNX Runtime kernel fitting after).

``driver`` is the translator's entry (``write_direct``); ``builder`` holds the graph being
written; the op families (``elementwise``, ``shapes``, ``indexing``, ``reductions``,
``neural``) register their emitters in ``registry``. Nothing is imported here, so that
importing one module does not load torch.onnx's or ONNX Runtime's start-up cost.
"""
