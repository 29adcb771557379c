"""The wellness agent in Python: stress score, sleep summary, break suggestions and the tick
(the Rust agent's rules, module for module: common, stress, sleep, breaks, tick)."""
