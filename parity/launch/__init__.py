"""parity.launch: the launch ABI of the conv kernels, below the emulator and the GPU runtime.

Owns the conv_launch plan (``plan``: grid, block, cluster shape, buffer bytes), the kernarg
packing from the engines' argument lists (``kernarg``), the cluster launch rule (``cluster``),
the launch errors (``errors``), the Stage-2 reduce pairing rule (``reduce_launch``) and the
reduce launch's spec and grid (``stage2``): pure host-side rules, shared by the GPU runtime
(parity/runtime) and the emulator's launch route (parity/sim), so both take one route.

May import: the engines' public API (python_engine, python_engine.facts, cpp_engine) and the
standard library; nothing of parity above it (no runtime, no sim, no catalog).
"""
