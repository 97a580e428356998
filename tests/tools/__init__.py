"""User-facing surfaces: the command line, the demo, the docs, the examples, the viewer and the public API snapshot."""
