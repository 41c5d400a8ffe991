"""``parity numerics`` (docs/sim.md): the command lives with the CPU emulator in
parity/sim/numerics.py; this module gives it the one registration name of the
command modules (``add_command(sub)``, parity/cli.py) until numerics.py has it.
"""

from __future__ import annotations

from parity.sim.numerics import add_numerics_command as add_command

__all__ = ["add_command"]
