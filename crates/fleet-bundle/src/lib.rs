//! Bundle reading over abstract file trees: discovery, fleet.yaml, overlays, naming and hashing. Pure: no I/O beyond the tree it is given.
