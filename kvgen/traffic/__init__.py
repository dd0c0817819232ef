"""Traffic: a request trace replayed through the tiers kvgen planned (``kvgen explain --trace``).

``trace`` reads a trace file, ``stack`` finds every block's LRU stack distance (Mattson's one pass),
``routing`` sends requests to replicas as each routing mode would, and ``replay`` turns distances into
hit ratios per tier, the curve against capacity and the capacity a target needs. Nothing here reads a
spec or a plan: the caller hands over the tiers' capacities (docs/sizing.md, "Hit ratios from a trace").
"""
