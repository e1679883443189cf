"""C code generation for the "c|py" linker: one registry, one module per Op family."""
