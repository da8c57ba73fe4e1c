"""ONNX writing: the direct fx->ONNX translator, its proto writer, and the fixes applied to
what torch.onnx writes (decompositions before export, ONNX Runtime kernel fitting after).

``driver`` is the translator's entry (``write_direct``); ``builder`` holds the graph being
written; the op families (``elementwise``, ``shapes``, ``indexing``, ``reductions``,
``neural``) register their emitters in ``registry``; ``proto`` encodes the model bytes.
Nothing is imported here, so importing one module does not load the others.
"""
