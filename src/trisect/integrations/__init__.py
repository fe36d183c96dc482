"""trisect inside other systems: each module is a shell over the public API, imported only by
whoever uses it (``ray``: Ray Data). The core never imports this package."""
