"""GPU engine: gMatch's fine-grained subgraph matching on CUDA (CuPy + NVRTC).

Importing this package needs no GPU and no CuPy; :meth:`GpuEngine.available`
says whether the engine can run here. See :mod:`.engine` for the execution
model and :mod:`.render` for the per-plan code generation.
"""
from __future__ import annotations

from .engine import GpuEngine
from .source import build_source, stack_bytes

__all__ = ["GpuEngine", "build_source", "stack_bytes"]
